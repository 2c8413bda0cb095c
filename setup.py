"""The repository root is the `shardwise` package: engine/ installs as shardwise.engine,
tools/ as shardwise.tools, and so on, so nothing generic lands in site-packages."""

from setuptools import find_packages, setup

LAYERS = ["engine", "tools", "agent", "prompts", "evals", "web", "cli"]
DATA_SUFFIXES = ["*.json", "*.yaml", "*.yml", "*.toml", "*.csv", "*.j2", "*.jinja", "*.html",
                 "*.css", "*.js", "*.svg", "*.md", "*.txt", "*.tiktoken"]

subpackages = [p for p in find_packages(".") if p.split(".")[0] in LAYERS]
packages = ["shardwise"] + [f"shardwise.{p}" for p in subpackages]

# Data files only inside the layers: the root package must not sweep up build/, .venv/ or tests/.
package_data = {p: DATA_SUFFIXES + ["**/*.json", "**/*.yaml", "**/*.j2", "**/*.csv"] for p in packages[1:]}
# The web page's templates and assets live in plain folders (not packages) under web/.
package_data["shardwise.web"] += ["templates/*.html", "static/*.css", "static/*.js"]

setup(
    packages=packages,
    package_dir={"shardwise": "."},
    package_data=package_data,
    include_package_data=False,
)
