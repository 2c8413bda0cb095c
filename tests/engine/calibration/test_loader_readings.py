"""Session 12's loader readings (docs/performance.md, "Session 12: loader readings and band challengers v9/v10"):
(a) a row's software stack gets the engine framework of stacks.STACK_FRAMEWORKS (first marker wins), or is excluded
as unmodelled / unknown; (b) a row's stated gpus_per_node is the NVLink domain when smaller than the GPU's board
domain (not for rack-scale NVL72 GPUs, whose 4-GPU trays are no domain boundary). The rows here are hand-written;
the expected framework of each is the table's entry for its marker, the expected cluster the rule's arithmetic."""

import csv

import pytest

from shardwise.engine.calibration import external
from shardwise.engine.calibration.external import EXTERNAL_FILES, EXTERNAL_PART_FILES
from shardwise.engine.calibration.runs import DATA, RUN_FILES, _run
from shardwise.engine.calibration.stacks import STACK_FRAMEWORKS, framework_for_stack, stack_reading

SEEN_SETS = range(1, 9)  # the sets this reading was written from; later sets are not read here


def _header() -> list[str]:
    with open(DATA / RUN_FILES[0], newline="") as f:
        return next(csv.reader(f))


def _row(**cells) -> dict:
    row = dict.fromkeys(_header(), "")
    row.update(source="a loader-reading test", model="Llama 3.1 8B", gpu="H100 80GB SXM", num_gpus="8",
               framework="Megatron-LM", seq_len="8192", global_batch_seqs="64", tp="1", pp="1", precision="BF16",
               measured_tokens_per_sec_per_gpu="1000", notes="")
    row.update(cells)
    return row


# (framework column as the data files print such stacks, the table's framework for it)
@pytest.mark.parametrize("column,expected", [
    ("Megatron-Bridge / Megatron-Core (26.04 NeMo container)", "megatron"),
    ("NeMo / Megatron-Core (24.07 NeMo container)", "megatron"),
    ("NVIDIA NeMo Framework Release 23.09", "megatron"),  # 'nemo': NeMo trains on Megatron-Core
    ("Megatron-LLaMA (Megatron-LM fork; README revision 2023.10.09)", "megatron"),
    ("MegaScale (built on Megatron-LM 285068c8)", "megatron"),
    ("Megatron-DeepSpeed (DeepSpeed + Megatron-LM 3D parallelism; MT-NLG 2021)", "megatron"),  # TP with PP
    ("PyTorch NVIDIA Release 23.09 (MLPerf Training v5.0 Oracle submission 8xBM.GPU.B200.8)", "megatron"),
    ("DGL NVIDIA Release 24.09 (MLPerf Training v5.0 Dell submission 1xXE9680Lx8H200-SXM-141GB)", "megatron"),
    ("NeMo AutoModel (PyTorch FSDP2 + Transformer Engine; main branch)", "fsdp"),
    ("DeepSpeed (HF) with FlashAttention (README comparison baseline)", "deepspeed"),
    ("Colossal-AI (examples/language/llama/benchmark.py, bf16)", "deepspeed"),
    ("torchtitan (PyTorch FSDP2/DTensor)", "fsdp"),
    ("Composer/LLM Foundry (PyTorch FSDP)", "fsdp"),
    ("KempnerForge (PyTorch FSDP2 + DTensor TP, torch.compile)", "fsdp"),
    ("FlashAttention training scripts (PyTorch Lightning DDP; flash-attn GPT model)", "fsdp"),
    ("FlashAttention authors' GPT-2 implementation (PyTorch, 2022; FlashAttention-1 kernels)", "fsdp"),
    ("HuggingFace transformers GPT-2 (PyTorch, 2022)", "fsdp"),
    ("Meta Llama 3 training stack (PyTorch 4D parallelism [TP, CP, PP, DP]; NCCLX)", "fsdp"),
    ("LLaMA-Factory (commit 8e04794; Hugging Face transformers Trainer)", "fsdp"),  # 'hugging face', two words
    ("InternEvo (InternLM training framework: Hybrid ZeRO, FlashAttention, Apex)", None),  # not the FA authors' code
    ("nanotron", "nanotron"),
    ("MaxText (JAX/XLA) (DGX Cloud benchmarking v25.01.1)", None),
    ("MaxText (JAX/XLA) (MLPerf Training v5.0 a submission)", None),  # 'jax' comes before 'mlperf training'
    ("an in-house stack nobody named", None),
])
def test_a_stack_gets_the_framework_of_its_tables_entry(column, expected):
    assert framework_for_stack(column)[0] == expected


def test_a_stack_no_entry_names_is_excluded_not_given_megatrons_terms():
    run = _run("test.csv", 2, _row(framework="an in-house stack nobody named"))
    assert not run.used and "in no entry of the stack table" in run.status
    jax = _run("test.csv", 3, _row(framework="MaxText (JAX/XLA)"))
    assert not jax.used and "JAX/XLA" in jax.status


def test_a_row_runs_as_its_stacks_framework_and_pays_that_frameworks_host_time():
    run = _run("test.csv", 2, _row(framework="Colossal-AI (LowLevelZero plugin)", zero_stage_or_fsdp="ZeRO-2"))
    assert run.used and run.setup.framework == run.host_framework == "deepspeed"
    lightning = _run("test.csv", 3, _row(framework="FlashAttention training scripts (PyTorch Lightning DDP)"))
    assert lightning.setup.framework == lightning.host_framework == "fsdp"


def test_every_stack_of_the_calibration_data_and_sets_1_to_8_has_an_entry():
    files = list(RUN_FILES) + [f for n in SEEN_SETS for f in EXTERNAL_PART_FILES.get(n, (EXTERNAL_FILES[n],))]
    stacks = set()
    for file in files:
        with open(DATA / file, newline="") as f:
            stacks |= {row["framework"] for row in csv.DictReader(f)}
    assert len(stacks) > 100  # MLPerf systems each print their containers
    assert not [s for s in stacks if stack_reading(s) is None]


def test_the_first_matching_marker_decides():
    """Markers that other rows' columns contain come after the more specific ones (stacks.py, 'Order matters')."""
    order = [s.marker for s in STACK_FRAMEWORKS]
    assert order.index("megatron-deepspeed") < order.index("deepspeed")
    assert order.index("nemo automodel") < order.index("nemo")
    assert order.index("mlperf training") < order.index("pytorch")
    assert order.index("meta llama 3 training stack") < order.index("pytorch")


# (GPU column, #GPUs, stated gpus_per_node, expected Cluster.gpus_per_node): min(domain, #GPUs), the domain being the
# stated figure when smaller than the board's 8 (catalog GPUs); GB200's NVL72 domain (72) ignores the tray's 4.
@pytest.mark.parametrize("gpu,gpus,stated,expected", [
    ("H200 (141 GB)", "16", "4", 4),  # KempnerForge: 16 GPUs on 4-GPU nodes -> 4 nodes
    ("H100 80GB SXM", "16", "8", 8),
    ("H100 80GB SXM", "16", "", 8),  # not stated: the board's domain
    ("H100 80GB SXM", "2", "8", 2),  # a run on part of a node
    ("GB200 (NVL72, 4 GPUs per compute node)", "68", "4", 68),  # min(72, 68): trays are not a domain boundary
    ("GB200 (NVL72, 4 GPUs per compute node)", "144", "4", 72),
])
def test_a_stated_smaller_node_is_the_nvlink_domain(gpu, gpus, stated, expected):
    run = _run("test.csv", 2, _row(gpu=gpu, num_gpus=gpus, gpus_per_node=stated, framework="torchtitan (FSDP2)"))
    assert run.used and run.cluster.gpus_per_node == expected
    assert run.cluster.num_nodes == -(-int(gpus) // expected)


def test_a_gpus_per_node_not_represented_note_is_lifted_only_where_the_parser_reads_the_node(tmp_path, monkeypatch):
    """Set 8b's 'NOT REPRESENTED: GPUS PER NODE 4' rows: lifted by the rule (the parser reads the stated node), not by
    editing rows; another NOT REPRESENTED reason, or the note on a GPU whose stated node is not read, stays excluded."""
    header = _header()
    note = "NOT REPRESENTED: GPUS PER NODE 4 - two nodes of 4"
    rows = [_row(gpu="H200 (141 GB)", gpus_per_node="4", notes=note),
            _row(gpu="GB200 (NVL72)", gpus_per_node="4", notes=note),
            _row(gpu="H200 (141 GB)", gpus_per_node="4", notes="NOT REPRESENTED: activation offloading")]
    with open(tmp_path / "external_runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setattr(external, "DATA", tmp_path)
    lifted, rack, other = external._load("external_runs.csv")
    assert lifted.used and lifted.cluster.gpus_per_node == 4 and lifted.cluster.num_nodes == 2
    assert not rack.used and "GPUS PER NODE 4" in rack.status
    assert not other.used and "activation offloading" in other.status


def test_a_profile_saved_from_a_parser_built_gpu_variant_names_the_catalog_gpu_it_copies():
    # torchtitan's Grand Teton H100 96GB (500 W) is built by the row parser as a copy of the catalog's h100-sxm with
    # 89.4 GiB; a user of that part picks h100-sxm in the product, so the profile they save names h100-sxm (a profile
    # naming 'h100-sxm-96gb' is refused: not a catalog GPU)
    from shardwise.engine.calibration.runs import catalog_gpu_id, gpu_for_row
    from shardwise.engine.hardware_catalog import get_gpu

    gpu, _, why = gpu_for_row(_row(gpu="H100 96GB HBM2e (Grand Teton, 500 W)"))
    assert not why and gpu.id == "h100-sxm-96gb" and gpu.memory_gib == 89.4
    assert catalog_gpu_id(gpu) == "h100-sxm" == get_gpu("h100-sxm").id
    assert catalog_gpu_id(get_gpu("b200")) == "b200"
