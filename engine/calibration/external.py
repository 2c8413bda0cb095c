"""External held-out runs (data/external_runs.csv): published, measured runs collected after the fit and the
error bands were built, so nothing in shardwise was tuned on them. They are parsed by runs.py's row parser,
exactly like the calibration rows, but they never enter load_runs()/used_runs() (fit, bands, folds): a
first-run check evaluates the engine on them once. Set 2 (data/external_runs_2.csv, load_external_runs_2) was
collected the same way after set 1 had been seen by two band methods; the two sets are loaded separately.
Set 3 (data/external_runs_3.csv, load_external_runs_3) was collected after sets 1 and 2 had been seen by band
methods v2-v4, from sources neither used (FlashAttention's training README, FlagPerf's NVIDIA cases, the MT-NLG,
Llama 3 and MegaScale papers' throughput tables); it is held for a future method's first run and evaluated by
nothing yet. Set 4 (data/external_runs_4.csv, load_external_runs_4) was collected in session 8, while set 3 served as
a judge, from sources sets 1-3 did not use; it too is evaluated by nothing yet. Set 5 (data/external_runs_5.csv,
load_external_runs_5) was collected in session 9 from MLPerf Training rounds sets 1-4 did not use (v3.0, v4.1, v5.0,
v5.1, and v4.0's LoRA runs by submitters other than NVIDIA), as the first-run judge of that session's band method.
Set 6 (data/external_runs_6.csv, load_external_runs_6) was collected later in session 9 from sources sets 1-5 did not
use (the Nemotron-4 15B report's batch-ramp table, the FlashAttention-2 paper's training-speed table, the NeMo Megatron
launcher's README and examples README performance tables), for a future judge; with set 7 (MLPerf Training v6.0,
data/external_runs_7.csv, collected in session 10) it had its first run in session 10 and is in the judged-set table
below. It adds two notes markers: 'PARTIAL BLOCK AC: ...' (a stated part of the layers recomputed,
excluded like set 4's unstated fraction) and 'SAME MEASUREMENT AS EARLIER DATA: ...' (a re-print of an earlier file's
run, excluded like set 5's same layout). Its MoE rows (the Megatron-MoE-ModelZoo Qwen3 best-practice tables and
Megatron-LM's examples/moe_recipes README, each row with its recipe yaml) add two
more, both on how that README prints a run, written while collecting and before any prediction: 'MOE SETUP: ...'
(the dispatcher, expert all-to-all overlap, CUDA graphs and recompute modules its table or launch command states,
which Megatron-Bridge rows take from bridge_moe_recipes.csv and no column holds) and 'NOT REPRESENTED: ...' (a run
using a feature the engine has no model of, e.g. activation offloading: written, excluded).

Beyond the row parser, two rules of their own, both on how the sources print their tables (not on values):
- a page revised within one release (NeMo 24.07's summary was re-measured twice; a B200 long-sequence table
  was re-laid-out) keeps its latest revision; the rows of earlier revisions are marked superseded;
- a row whose printed layout does not multiply out (TP x PP x CP x DP != #GPUs, DP as printed) is excluded.
Rows of frameworks the engine does not model (JAX/XLA) or without a sequence length are excluded before parsing;
set 2's NeMo 25.07 rows holding the bracketed figure of an 'a (b)' cell are excluded (the page says nowhere we
could read what that figure measured), and so are its AutoModel rows whose printed local batch x GA x DP is not
the printed global batch.
Set 4 adds five rules, again on how its sources print their tables or logs: a row whose notes say 'HSDP replicas=N'
(PyTorch FSDP hybrid shard: sharded within a node, replicated across N nodes) gets Strategy.hsdp_replicas = N,
which the row parser has no column for; a row whose recompute is block-level checkpointing of an unstated
fraction of the blocks (notes 'AC FRACTION NOT STATED') is excluded, as neither 'none', 'selective' nor 'full';
a row the source's own text contradicts (notes 'SOURCE CONTRADICTS ROW: ...') is excluded with that reason; an
MLPerf repeat run ('REPEAT RUN k of n') is written but not used (the first run of the system is); and a TP run
without TP-communication overlap ('vanilla TP') is a configuration of its own for the newest-release rule.
Set 5 adds two rules: a row whose notes say 'PRECISION NOT STATED' (an MLPerf v5.1 system whose committed configs give
one layout in an FP8 and an NVFP4 variant, or whose config sets no format and sources files the repository lacks, the
log naming none) is excluded; and so is a row marked 'SAME LAYOUT AS
EARLIER DATA' (its model, GPU, #GPUs, sequence, precision and TP/PP/CP/VP/EP are a row's of the calibration data or
sets 1-4, found by parsing, never by predicting), so the set holds no configuration another file already holds.
Then the newest-release rule of the Megatron-Bridge rows: one configuration measured in several releases
keeps the newest release's row.
Set 7 (data/external_runs_7.csv, load_external_runs_7) was collected in session 10 from MLPerf Training v6.0, a round
sets 1-6 did not use, for a future judge: nothing evaluates it, and it is in no judged-set table below. It is read by
set 5's rules unchanged (MLPerf source names, the first-written-system rule, precision not stated, same layout as
earlier data) and adds one rule on reporting, written before any row was predicted: a row its notes exclude
(precision not stated, not represented, ...) whose throughput was not transcribed because of it (its long log not
read) is reported with the notes' reason, not as 'no measured throughput'. Its notes also carry 'LORA RANK: n',
'LORA TARGETS: ...', 'CP COMM TYPE: ...' and 'CUDA GRAPHS: yes/no' where the log or config states them, which no
rule here reads.
Set 8 (data/external_runs_8.csv and, when it exists, data/external_runs_8b.csv, load_external_runs_8) was collected in
session 11 by two helpers from sources sets 1-7 and the calibration data do not use (part A: papers' measured
throughput tables - FP8-LM, Zero Bubble pipeline parallelism, MoE Parallel Folding, FlashAttention(-1); part B: projects' READMEs and blog
posts), as that session's one judge of an engine candidate and a band method (docs/performance.md, "Protocol for
session 11"); nothing was predicted on it while collecting. It is read by every earlier set's rules, unchanged (set 7's
reporting rule included), with its sources' short names
(SET_8_SOURCES: part A's papers; part B's READMEs, added by the lead); the two parts are one set, and a
configuration both parts hold keeps one row. Two new readings, both on how a source prints a run and written before any
prediction (none was run on set 8): runs.py's row parser no longer reads 'GH200' (Grace Hopper, not in the catalog) as
H200; and a notes marker 'EXPERT TP: n' gives the run's experts tensor parallelism n (Strategy.etp; the parser's is 1),
for a Megatron-Core MoE run without MoE parallel folding, whose experts take the attention's TP (the MoE Parallel
Folding paper's 'MCore' rows print an empty ETP cell). It joined JUDGED_EXTERNAL_SETS and EXTERNAL_FILES (its
part-B file in EXTERNAL_PART_FILES) for its first run in session 11.
Set 9 (data/external_runs_9.csv and, when it exists, data/external_runs_9b.csv, load_external_runs_9) was collected in
session 12 by two helpers from sources the calibration data and sets 1-8 do not use (part A: papers' measured
throughput tables; part B: projects' READMEs, docs and blog posts), as that session's one judge of the band method
(docs/performance.md, "Protocol for session 12"); nothing was predicted on it while collecting. It is read like set 8
(_load_parts): every earlier set's rules, unchanged (set 7's reporting rule included), its papers' short source names
(SET_9_SOURCES), and a configuration both parts hold keeps one row (part A's, the first read). It adds no rule of its
own. Part C (data/external_runs_9c.csv: users' runs in GitHub threads, a third helper) joined before any prediction,
each thread its own source (_thread_source). Set 9 joined JUDGED_EXTERNAL_SETS and EXTERNAL_FILES (its three files in
EXTERNAL_PART_FILES) for its first run in session 12.
Set 10 (data/external_runs_10.csv, part A: papers' measured throughput tables; data/external_runs_10b.csv, part B:
projects' docs, READMEs and blog posts; data/external_runs_10c.csv, part C: users' and maintainers' runs in GitHub
threads; load_external_runs_10 reads each part whose file exists) was collected in session 13 by three helpers from
sources the calibration data and sets 1-9 do not use, as that session's one judge of the band challengers
(docs/performance.md, "Protocol for session 13"); nothing was predicted on it while collecting. It is read like set 9
(_load_parts): every earlier set's rules, unchanged (set 7's reporting rule included), its sources' short names
(SET_10_SOURCES), part C's threads each their own source (_thread_source), and a configuration two parts hold keeps
one row (the first part's). It adds no rule of its own. It joined JUDGED_EXTERNAL_SETS and EXTERNAL_FILES for its
first run in session 13.
Set 11 (data/external_runs_11.csv, papers, and external_runs_11b.csv, docs, result folders and threads;
load_external_runs_11) was collected later in session 13 by two helpers, for session 14's judge of engine candidate
E12 and the bands ("Protocol for session 14's judge"); nothing was predicted on it while collecting. It is read like
set 10, with its sources' short names (SET_11_SOURCES). It is in no judged-set table until that judge; its part files
are listed in EXTERNAL_PART_FILES, which only those tables' sets are looked up in.
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from functools import lru_cache

from .runs import (DATA, GPUS_PER_NODE_NOT_READ, CalibrationRun, _int, _release, _run, short_source,
                   stated_gpus_per_node_read)

EXTERNAL_FILE = "external_runs.csv"
# Set 2, collected 2026-11-26 (session 7) as the first-run judge of a new band method: same columns, same parser.
EXTERNAL_FILE_2 = "external_runs_2.csv"
# Set 3, collected 2026-11-26 (session 7) for a FUTURE band method's first run: nobody evaluates it before then.
EXTERNAL_FILE_3 = "external_runs_3.csv"
# Set 4, collected 2026-11-26 (session 8) for a FUTURE band method's first run: nobody evaluates it before then.
EXTERNAL_FILE_4 = "external_runs_4.csv"
# Set 5, collected 2026-11-27 (session 9) as the first-run judge of that session's band method.
EXTERNAL_FILE_5 = "external_runs_5.csv"
# Set 6, collected 2026-11-27 (session 9) for a FUTURE judge: nobody evaluates it before then.
EXTERNAL_FILE_6 = "external_runs_6.csv"
# Set 7, collected 2026-11-27 (session 10) from MLPerf Training v6.0 for a FUTURE judge: nobody evaluates it before then.
EXTERNAL_FILE_7 = "external_runs_7.csv"
# The MLPerf sets: each round and submitter is a source of its own, and one submitter's round running one
# configuration on several systems keeps the first-written system (see _dedupe_releases).
MLPERF_FILES = (EXTERNAL_FILE_5, EXTERNAL_FILE_7)
# Set 8, collected 2026-11-27 (session 11) as that session's judge, in two parts by two collectors (same columns):
# part A (papers) and, if present, part B (READMEs and blog posts). Not judged yet: in no set table below.
EXTERNAL_FILE_8 = "external_runs_8.csv"
EXTERNAL_FILE_8B = "external_runs_8b.csv"
SET_8_FILES = (EXTERNAL_FILE_8, EXTERNAL_FILE_8B)
# Set 9, collected 2026-11-27 (session 12) as that session's judge, in three parts (part A: papers; part B,
# if present: READMEs, docs and blog posts; part C: users' runs in GitHub threads). Judged from session 12 (its first run).
EXTERNAL_FILE_9 = "external_runs_9.csv"
EXTERNAL_FILE_9B = "external_runs_9b.csv"
# part C (users' own runs posted in GitHub issue and pull-request threads; the lead added it, before any prediction)
EXTERNAL_FILE_9C = "external_runs_9c.csv"
SET_9_FILES = (EXTERNAL_FILE_9, EXTERNAL_FILE_9B, EXTERNAL_FILE_9C)
# Set 10, collected 2026-11-27 (session 13) as that session's one judge, in three parts by three collectors (part A:
# papers; part B: projects' docs, READMEs and blog posts; part C: runs in GitHub threads). Parts B and C are read when
# their files exist. Not judged yet: in no judged-set table below.
EXTERNAL_FILE_10 = "external_runs_10.csv"
EXTERNAL_FILE_10B = "external_runs_10b.csv"
EXTERNAL_FILE_10C = "external_runs_10c.csv"
SET_10_FILES = (EXTERNAL_FILE_10, EXTERNAL_FILE_10B, EXTERNAL_FILE_10C)
EXTERNAL_FILE_11 = "external_runs_11.csv"
EXTERNAL_FILE_11B = "external_runs_11b.csv"
SET_11_FILES = (EXTERNAL_FILE_11, EXTERNAL_FILE_11B)
# The sets written in several parts, by number: a configuration two parts hold keeps one row (_dedupe_releases)
TWO_PART_SETS = {8: SET_8_FILES, 9: SET_9_FILES, 10: SET_10_FILES, 11: SET_11_FILES}
# Set 4's source names (runs.py short_source knows sets 1-3's): matched in the row's source, lower case.
# torchtitan's 2024 docs/performance.md tables get a name of their own: 'torchtitan' is the calibration source
# (its Dec 2024 / Jun 2025 benchmark files), and these are other measurements (A100; 405B on 128 H100).
SET_4_SOURCES = {"fms-fsdp": "fms-fsdp", "colossal-ai": "colossal-ai", "megatron-llama": "megatron-llama",
                 "torchtitan docs/performance.md": "torchtitan-docs-2024", "mlperf training v4.0 nvidia": "mlperf-training-v4.0",
                 "mlperf training v3.1 nvidia": "mlperf-training-v3.1", "mlperf training v3.1 azure": "mlperf-training-v3.1-azure"}


# Set 6's source names (a paper and its table), matched in the row's source, lower case.
SET_6_SOURCES = {"nemotron-4 15b technical report": "nemotron4-15b-report-2024",
                 "flashattention-2 paper": "flash-attn2-paper-2023",
                 "nemo megatron launcher readme": "nemo-megatron-launcher-readme",
                 "nemo megatron launcher examples readme": "nemo-launcher-examples-2024",
                 "megatron-moe-modelzoo": "megatron-moe-modelzoo",
                 "megatron-lm examples/moe_recipes": "megatron-lm-moe-recipes"}


# Set 8's paper names (part A), matched in the row's source, lower case; other sources keep runs.py's short_source.
SET_8_SOURCES = {"fp8-lm paper": "fp8-lm-2023", "zero bubble pipeline parallelism paper": "zero-bubble-pp-2023",
                 "moe parallel folding paper": "moe-parallel-folding-2025",
                 "flashattention paper (dao et al., 2022)": "flash-attn1-paper-2022",
                 # part B's READMEs and benchmark reports (the lead, after merging; names only, before any prediction)
                 "olmo-core readme throughput table": "olmo-core-readme",
                 "torchao float8 training benchmarks": "torchao-float8-readme",
                 "torchao mx_formats training benchmarks": "torchao-mx-readme",
                 "kempnerforge benchmark reports": "kempnerforge-benchmarks",
                 "crusoe cloud cluster benchmark": "crusoe-torchtitan-readme"}


# Set 9's source names (part A's papers, part B's READMEs), matched in the row's source, lower case; other sources keep runs.py's short_source.
SET_9_SOURCES = {"torchtitan paper": "torchtitan-paper-2024", "distflashattn paper": "distflashattn-2023",
                 # part B's READMEs, docs and posts (the lead, after merging; names only, before any prediction)
                 "vectorlm reference throughput": "vectorlm-reference-throughput",
                 "lambda batch-size notes": "lambda-b200-notes",
                 "pytorch and nebius mxfp8 and deepep blog": "pytorch-nebius-blog-2025",
                 "internevo training performance": "internevo-train-performance",
                 "xtuner speed benchmark": "xtuner-speed-benchmark",
                 "xtuner llama3 8b readme": "xtuner-llama3-readme",
                 "xtuner megatron moe benchmark": "xtuner-megatron-moe-notes",
                 "easycontext readme": "easycontext-readme"}


# Set 10's source names (part A's paper; part B's docs and posts, added by the lead when merging, before any
# prediction), matched in the row's source, lower case; part C's threads are named by _thread_source. Together AI's
# three B200 result files are one cluster's measurements (one source); its GB200 report is another cluster.
SET_10_SOURCES = {"activation rematerialization paper": "kwai-remat-atc24",
                  "dipankar baisya blog post": "baisya-gb200-blog",
                  "together ai b200 cluster results": "together-b200",
                  "together ai gb200 cluster training": "together-gb200",
                  "torchacc docs": "torchacc-docs",
                  "moussakam blog post": "moussakam-blog",
                  "supercharging training using float8 and fsdp2": "pytorch-float8-fsdp2-blog",
                  "from deepspeed to fsdp and back again": "hf-deepspeed-fsdp-blog"}

# Set 11's source names (part A's paper, part B's docs and result folders; the lead, when merging, before any
# prediction). AWS's two test cases in one repository are two teams' runs on two clusters: two sources.
SET_11_SOURCES = {"sdp4bit paper": "sdp4bit-paper",
                  "aws awsome-distributed-ai fsdp2 test case": "aws-fsdp2-readme",
                  "aws awsome-distributed-ai moe dispatcher": "aws-moe-dispatcher-results",
                  "azure hpc blog": "azure-nemo-megatron-blog",
                  "ms-swift docs": "ms-swift-megatron-benchmark",
                  "megatron-fsdp v2 prototype": "megatron-fsdp-v2-prototype",
                  "optimizing deepseek-v3 training performance": "nvidia-dsv3-gb200-doc",
                  "prime-rl docs": "prime-rl-performance-doc"}


def _superseded(row: dict) -> str:
    m = re.search(r"superseded by revision (\w+)", row["notes"])
    return f"superseded by a later revision of the same release's page ({m.group(1)})" if m else ""


def _layout_mismatch(row: dict) -> str:
    """The printed layout against #GPUs: TP x PP x CP x DP when the source prints DP, else TP x PP x CP must
    divide #GPUs (a DP derived from a layout that does not divide is no layout)."""
    tp, pp, cp, dp, gpus = (_int(row[k]) for k in ("tp", "pp", "cp", "dp", "num_gpus"))
    if None in (tp, pp, gpus):
        return ""
    model_parallel = tp * pp * (cp or 1)
    if "dp derived" in row["notes"].lower() or dp is None:
        if gpus % model_parallel:
            return f"printed layout inconsistent: TP x PP x CP = {model_parallel} does not divide #GPUs {gpus}"
        return ""
    if model_parallel * dp != gpus:
        return f"printed layout inconsistent: TP x PP x CP x DP = {model_parallel * dp}, #GPUs printed {gpus}"
    return ""


def _local_batch_mismatch(row: dict) -> str:
    """NeMo AutoModel prints GA in local batches (LBS per GPU per step), so its rows say so in notes ('printed GA
    N counts local batches (LBS M') rather than 'GA='; a printed LBS x GA x DP that is not the printed GBS is no
    batch (a few PP rows of its LoRA table)."""
    m = re.search(r"printed GA (\d+) counts local batches \(LBS (\d+)", row["notes"])
    dp, gbs = _int(row["dp"]), _int(row["global_batch_seqs"])
    if not m or None in (dp, gbs):
        return ""
    local = int(m.group(1)) * int(m.group(2)) * dp
    return "" if local == gbs else f"inconsistent batch: LBS x GA x DP = {local} as printed, global batch printed {gbs}"


# Frameworks whose runs the engine has no host/overlap model for (TrainingSetup.framework: megatron, fsdp, nanotron).
UNMODELLED_FRAMEWORKS = {"jax": "JAX/XLA framework (MaxText, PaxML): not a framework the engine models"}


def _bracketed(row: dict) -> str:
    """NeMo 25.07's summary prints some cells as 'a (b)'; the stored page text gives no meaning for the
    bracketed figure, so its run is written (notes 'BRACKETED figure') but not used."""
    return ("bracketed figure of an 'a (b)' cell: the retrieved page does not say what it measured"
            if "bracketed figure" in row["notes"].lower() else "")


def _unmodelled(row: dict) -> str:
    return next((why for key, why in UNMODELLED_FRAMEWORKS.items() if key in row["framework"].lower()), "")


def _not_stated(row: dict) -> str:
    return "sequence length not stated" if not row["seq_len"].strip() else ""


def _partial_block_ac(row: dict) -> str:
    """Block-level checkpointing of part of the layers is neither none, selective nor full recompute: an unstated
    fraction ('AC FRACTION NOT STATED', set 4) or a stated one the engine cannot plan ('PARTIAL BLOCK AC: ...', set 6)."""
    if "ac fraction not stated" in row["notes"].lower():
        return "recompute: block-level activation checkpointing of an unstated fraction of the blocks"
    m = re.search(r"PARTIAL BLOCK AC: ([^;]+)", row["notes"])
    return f"recompute: block-level activation checkpointing of part of the layers ({m.group(1).strip()})" if m else ""


def _contradicted(row: dict) -> str:
    """'SOURCE CONTRADICTS ROW: ...' in notes: the source's own text says something else than the row prints."""
    m = re.search(r"SOURCE CONTRADICTS ROW: ([^;]+)", row["notes"])
    return f"the source contradicts the row: {m.group(1).strip()}" if m else ""


def _repeat_run(row: dict) -> str:
    """MLPerf submits several runs of one system and configuration (result_0, result_1, ...): the first is used,
    the others ('REPEAT RUN k of n' in notes) are kept in the file but not used, so no configuration counts twice."""
    m = re.search(r"REPEAT RUN (\d+) of (\d+)", row["notes"])
    return (f"repeat run {m.group(1)} of {m.group(2)} of a system and configuration whose first run is used"
            if m else "")


# 'MOE SETUP: key=value, ...' (set 6): the TrainingSetup fields a MoE table or its launch command states.
MOE_SETUP_KEYS = ("moe_dispatcher", "moe_a2a_overlap", "cuda_graphs", "recompute_modules")


def _with_moe_setup(run: CalibrationRun, row: dict) -> CalibrationRun:
    """A MoE row stating its dispatcher ('deepep' for DeepEP/HybridEP, as bridge_moe_recipes.csv maps them), expert
    all-to-all overlap, CUDA graphs or recompute modules in notes ('MOE SETUP: moe_dispatcher=deepep, moe_a2a_overlap=
    true, recompute_modules=layernorm+moe_act'): the setup gets them and the config names them, so two runs of one
    plan that differ only there (the ModelZoo's '+1f1b overlap' row) stay two configurations."""
    m = re.search(r"MOE SETUP: ([^;]+)", row["notes"])
    if not m or not run.used:
        return run
    fields = dict(kv.strip().split("=", 1) for kv in m.group(1).split(","))
    if not set(fields) <= set(MOE_SETUP_KEYS):
        raise ValueError(f"{row['source_locator']}: MOE SETUP keys {sorted(fields)} not among {MOE_SETUP_KEYS}")
    update = {k: v == "true" if k == "moe_a2a_overlap" else tuple(v.split("+")) if k == "recompute_modules" else v
              for k, v in fields.items()}
    label = " ".join(f"{k}={v}" for k, v in sorted(fields.items()))
    return replace(run, setup=run.setup.model_copy(update=update), config=f"{run.config} {label}")


def _not_represented(row: dict) -> str:
    """'NOT REPRESENTED: why' in notes (set 6): the run uses something the engine has no model of."""
    m = re.search(r"NOT REPRESENTED: ([^;]+)", row["notes"])
    if m and m.group(1).startswith(GPUS_PER_NODE_NOT_READ) and stated_gpus_per_node_read(row):
        return ""  # session 12: the row parser reads the stated GPUs per node (runs.gpus_per_node_for_row)
    return f"the engine does not represent the run: {m.group(1).strip()}" if m else ""


def _with_hsdp(run: CalibrationRun, row: dict) -> CalibrationRun:
    """'HSDP replicas=N' in notes: the plan shards within DP/N GPUs and replicates N times (Strategy.hsdp_replicas)."""
    m = re.search(r"HSDP replicas=(\d+)", row["notes"])
    if not m or not run.used:
        return run
    strategy = run.strategy.model_copy(update={"hsdp_replicas": int(m.group(1))})
    return replace(run, strategy=strategy, config=f"{run.config} hsdp{m.group(1)}")


def _with_expert_tp(run: CalibrationRun, row: dict) -> CalibrationRun:
    """'EXPERT TP: n' in notes (set 8): the experts' tensor parallelism the source states (a Megatron-Core run without
    MoE parallel folding splits the experts with the attention's TP, which no column holds; the row parser's ETP is 1)."""
    m = re.search(r"EXPERT TP: (\d+)", row["notes"])
    if not m or not run.used:
        return run
    return replace(run, strategy=run.strategy.model_copy(update={"etp": int(m.group(1))}),
                   config=f"{run.config} etp{m.group(1)}")


def _with_tp_overlap_label(run: CalibrationRun) -> CalibrationRun:
    """A TP run without overlapped TP communication ('vanilla TP' in notes) is another configuration than the same
    plan with it (torchtitan's async TP rows), so the newest-release rule must not fold one into the other."""
    if not run.used or run.tp_comm_overlap or run.strategy.tp == 1:
        return run
    return replace(run, config=f"{run.config} no-tp-overlap")


def _renamed(run: CalibrationRun, name: str) -> CalibrationRun:
    """The run under source `name`, also as the head of its group ('source | model | GPU x n | ...')."""
    if not name:
        return run
    group = name + run.group[len(run.source):] if run.group.startswith(run.source) else run.group
    return replace(run, source=name, group=group)


def _short_source(run: CalibrationRun, row: dict, names: dict[str, str]) -> CalibrationRun:
    """Sets 4 and 6: the short source name whose key the row's source holds (one per paper or README)."""
    return _renamed(run, next((short for key, short in names.items() if key in row["source"].lower()), ""))


def _precision_not_stated(row: dict) -> str:
    """'PRECISION NOT STATED: why' in notes: the committed configs leave the run's number format open."""
    m = re.search(r"PRECISION NOT STATED: ([^;]+)", row["notes"])
    return f"precision not stated: {m.group(1).strip()}" if m else ""


def _earlier_layout(row: dict) -> str:
    m = re.search(r"SAME LAYOUT AS EARLIER DATA: ([^;]+)", row["notes"])
    if m:
        return f"the layout of an earlier file's row: {m.group(1).strip()}"
    # set 6: a source re-printing a run an earlier file holds (its layout printed with fewer columns, so parsing alone
    # cannot match it) says so in notes; the earlier file's row stands for the run
    m = re.search(r"SAME MEASUREMENT AS EARLIER DATA: ([^;]+)", row["notes"])
    return f"a re-print of an earlier file's run: {m.group(1).strip()}" if m else ""


def _set_5_source(run: CalibrationRun, row: dict) -> CalibrationRun:
    """Sets 5 and 7's MLPerf rows: 'mlperf-training-<round>' for NVIDIA's own submissions, '...-<submitter>' for the others
    (each round and submitter is another source, so the newest-release rule never folds one into another)."""
    m = re.match(r"MLPerf Training (v[\d.]+) (\S+) results", row["source"])
    if not m:
        return run
    return _renamed(run, f"mlperf-training-{m.group(1)}" + ("" if m.group(2) == "NVIDIA" else f"-{m.group(2).lower()}"))


def _thread_source(run: CalibrationRun, row: dict) -> CalibrationRun:
    """Set 9's part C: each GitHub thread is its own source ('gh:owner/repo#n'), one poster's cluster — never merged
    with a project's own benchmark source (runs.py short_source would cut 'GitHub issue NVIDIA/Megatron-LM#371' to
    its first 30 characters, or name a Megatron-Bridge thread after the calibration source)."""
    m = re.match(r"GitHub (?:issue|pull request) (\S+#\d+)", row["source"])
    return _renamed(run, f"gh:{m.group(1).lower()}") if m else run


def _named_source(run: CalibrationRun, row: dict, file: str) -> CalibrationRun:
    if file == EXTERNAL_FILE_4:
        return _short_source(run, row, SET_4_SOURCES)
    if file == EXTERNAL_FILE_6:
        return _short_source(run, row, SET_6_SOURCES)
    if file in SET_8_FILES:
        return _short_source(run, row, SET_8_SOURCES)
    if file == EXTERNAL_FILE_9C:
        return _thread_source(run, row)
    if file in SET_9_FILES:
        return _short_source(run, row, SET_9_SOURCES)
    if file == EXTERNAL_FILE_10C:
        return _thread_source(run, row)
    if file in SET_10_FILES:
        return _short_source(run, row, SET_10_SOURCES)
    if file in SET_11_FILES:
        return _short_source(run, row, SET_11_SOURCES)
    return _set_5_source(run, row) if file in MLPERF_FILES else run


def _excluded(line: int, row: dict, reason: str, file: str = EXTERNAL_FILE) -> CalibrationRun:
    """A row set aside before the row parser (which needs a sequence length)."""
    return CalibrationRun(key=f"{file}:{line}", source=short_source(row["source"]), model_label=row["model"],
                          model=None, cluster=None, setup=None, strategy=None, tp_comm_overlap=True, fp8_rowwise=False,
                          host_framework="", cuda_graphs="none", measured_tokens_per_gpu=None, throughput_basis="",
                          measured_memory_gib=None, group="", config="", release=row["framework"],
                          status=f"excluded: {reason}")


def _dedupe_releases(runs: list[CalibrationRun], file: str = "") -> list[CalibrationRun]:
    """A configuration (same group and plan) measured in several releases keeps the newest release's row. In set 5
    one submitter's round often runs one configuration on several of its systems in one release: the first row of
    the file is kept (systems in the file's order, never by value) and the others say so; set 7 likewise."""
    newest: dict[tuple[str, str], CalibrationRun] = {}
    for r in runs:
        if r.used:
            k = (r.group, r.config)
            if k not in newest or _release(r) > _release(newest[k]):
                newest[k] = r
    keep = {id(r) for r in newest.values()}

    def why(r: CalibrationRun) -> str:
        kept = newest[(r.group, r.config)]
        if file in MLPERF_FILES and _release(kept) == _release(r):
            return (f"excluded: same configuration as the first-written system of this source and release "
                    f"({kept.release.rsplit('submission ', 1)[-1].rstrip(')')})")
        two_part = next((n for n, files in TWO_PART_SETS.items() if file in files), None)
        if two_part and _release(kept) == _release(r):
            return f"excluded: same configuration as an earlier row of set {two_part} ({kept.key})"
        return "excluded: same configuration measured with a newer release"
    return [r if not r.used or id(r) in keep else replace(r, status=why(r)) for r in runs]


def _load(file: str) -> tuple[CalibrationRun, ...]:
    runs = []
    with open(DATA / file, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            early = _unmodelled(row) or _not_stated(row)
            if early:
                runs.append(_named_source(_excluded(line, row, early, file), row, file))
                continue
            run = _with_moe_setup(_with_tp_overlap_label(_with_hsdp(_run(file, line, row), row)), row)
            run = _with_expert_tp(run, row)
            why = (_superseded(row) or _bracketed(row) or _layout_mismatch(row) or _local_batch_mismatch(row)
                   or _partial_block_ac(row) or _contradicted(row) or _precision_not_stated(row) or _repeat_run(row)
                   or _earlier_layout(row) or _not_represented(row))
            if why and run.used:
                run = replace(run, status=f"excluded: {why}")
            elif why and file in (EXTERNAL_FILE_7, *SET_8_FILES, *SET_9_FILES, *SET_10_FILES, *SET_11_FILES) and run.status == "excluded: no measured throughput":
                run = replace(run, status=f"excluded: {why}")  # set 7: excluded by its notes before its log was read
            runs.append(_named_source(run, row, file))
    return tuple(_dedupe_releases(runs, file))


@lru_cache(maxsize=1)
def load_external_runs() -> tuple[CalibrationRun, ...]:
    return _load(EXTERNAL_FILE)


@lru_cache(maxsize=1)
def load_external_runs_2() -> tuple[CalibrationRun, ...]:
    """External set 2 (data/external_runs_2.csv): never fitted, never in set 1; first run in session 7, in the
    bands of band methods v5 and v6 since (band_methods.EXTERNAL_SETS_IN_BANDS)."""
    return _load(EXTERNAL_FILE_2)


@lru_cache(maxsize=1)
def load_external_runs_3() -> tuple[CalibrationRun, ...]:
    """External set 3 (data/external_runs_3.csv): never fitted, in neither set 1 nor set 2; first run in session
    8 (the judge of v5), in band method v6's bands since (band_methods.EXTERNAL_SETS_IN_BANDS)."""
    return _load(EXTERNAL_FILE_3)


@lru_cache(maxsize=1)
def load_external_runs_4() -> tuple[CalibrationRun, ...]:
    """External set 4 (data/external_runs_4.csv): never fitted, never in the bands, in none of sets 1-3; first run
    in session 8 (the judge of v5 against v6)."""
    return _load(EXTERNAL_FILE_4)


@lru_cache(maxsize=1)
def load_external_runs_5() -> tuple[CalibrationRun, ...]:
    """External set 5 (data/external_runs_5.csv): never fitted, never in the bands, in none of sets 1-4 (no run of
    it is a run of set 4, no used row a layout of sets 1-4 or the calibration data); held for the first run of
    session 9's band method (v5 against v7), and evaluated by nothing before it; in no band method's bands."""
    return _load(EXTERNAL_FILE_5)


@lru_cache(maxsize=1)
def load_external_runs_6() -> tuple[CalibrationRun, ...]:
    """External set 6 (data/external_runs_6.csv): never fitted, never in the bands, in none of sets 1-5; first run
    in session 10 (with set 7, the judge of that session's engine candidate and band challenger). Sets 1-5's
    parser and rules, unchanged, plus its source names and the notes markers of the module docstring."""
    return _load(EXTERNAL_FILE_6)


@lru_cache(maxsize=1)
def load_external_runs_7() -> tuple[CalibrationRun, ...]:
    """External set 7 (data/external_runs_7.csv, MLPerf Training v6.0): never fitted, never in the bands, in none of
    sets 1-6; first run in session 10 (with set 6, the judge of that session's engine candidate and band
    challenger). Set 5's parser and rules (MLPERF_FILES), plus set 7's reporting rule in _load (a row its notes
    exclude reports that reason)."""
    return _load(EXTERNAL_FILE_7)


@lru_cache(maxsize=1)
def load_external_runs_8() -> tuple[CalibrationRun, ...]:
    """External set 8 (data/external_runs_8.csv, part A, and data/external_runs_8b.csv, part B, if that file exists):
    never fitted, never in the bands, in none of sets 1-7; first run in session 11, as the judge of that session's
    engine candidate and band challenger (docs/performance.md, "Protocol for session 11"). Every earlier set's rules;
    a configuration both parts hold keeps one row (the newest release's, else part A's, the first read)."""
    return _load_parts(SET_8_FILES)


@lru_cache(maxsize=1)
def load_external_runs_9() -> tuple[CalibrationRun, ...]:
    """External set 9 (data/external_runs_9.csv, part A, and parts B and C, external_runs_9b/9c.csv, if they exist):
    never fitted, never in the bands, in none of sets 1-8; first run in session 12, as that session's one judge of the
    band method (docs/performance.md, "Protocol for session 12"). Set 8's reading: every earlier set's rules; a
    configuration two parts hold keeps one row (the newest release's, else the first part's)."""
    return _load_parts(SET_9_FILES)


@lru_cache(maxsize=1)
def load_external_runs_10() -> tuple[CalibrationRun, ...]:
    """External set 10 (data/external_runs_10.csv, part A, and parts B and C, external_runs_10b/10c.csv, if they exist):
    never fitted, never in the bands, in none of sets 1-9; held for session 13's one judge of the band challengers
    (docs/performance.md, "Protocol for session 13") and evaluated by nothing before it. Set 9's reading: every earlier
    set's rules; a configuration two parts hold keeps one row (the newest release's, else the first part's)."""
    return _load_parts(SET_10_FILES)


def load_external_runs_11() -> tuple[CalibrationRun, ...]:
    """External set 11 (data/external_runs_11.csv, part A: papers; external_runs_11b.csv, part B: docs, result folders
    and threads): never fitted, never in the bands, in none of sets 1-10; collected in session 13 for session 14's
    judge of engine candidate E12 and the bands (docs/performance.md, "Protocol for session 14's judge") and
    evaluated by nothing before it. Read like set 10 (every earlier set's rules; a configuration both parts hold
    keeps one row)."""
    return _load_parts(SET_11_FILES)


def _load_parts(files: tuple[str, ...]) -> tuple[CalibrationRun, ...]:
    """A set written in parts: its first file, then each later part whose file exists, deduplicated as one set."""
    runs = list(_load(files[0]))
    for part in files[1:]:
        if (DATA / part).exists():
            runs += _load(part)
    return tuple(_dedupe_releases(runs, files[0]))


# The external sets that have had their first run, by number (a set joins only after its judge has run).
JUDGED_EXTERNAL_SETS = {1: load_external_runs, 2: load_external_runs_2, 3: load_external_runs_3, 4: load_external_runs_4,
                        5: load_external_runs_5, 6: load_external_runs_6, 7: load_external_runs_7, 8: load_external_runs_8,
                        9: load_external_runs_9, 10: load_external_runs_10}
EXTERNAL_FILES = {1: EXTERNAL_FILE, 2: EXTERNAL_FILE_2, 3: EXTERNAL_FILE_3, 4: EXTERNAL_FILE_4, 5: EXTERNAL_FILE_5,
                  6: EXTERNAL_FILE_6, 7: EXTERNAL_FILE_7, 8: EXTERNAL_FILE_8, 9: EXTERNAL_FILE_9,
                  10: EXTERNAL_FILE_10}
# A set written in several files (its first file above, all of them here): set 8, parts A and B; set 9, parts A-C
# (set 10's parts are listed before its first run: the files are looked up only for the sets of EXTERNAL_FILES)
EXTERNAL_PART_FILES = {8: SET_8_FILES, 9: SET_9_FILES, 10: SET_10_FILES, 11: SET_11_FILES}
