"""Run the `shardwise` command in-process, as the CLI tests do."""

from shardwise.cli.main import main


def run(capsys, *argv):
    """(exit code, stdout, stderr); argparse errors exit from inside parse_args, so catch them."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
