"""external_runs_5.csv: external set 5, MLPerf Training logs of rounds sets 1-4 did not use, held for the first run of
session 9's band method. Expected values below are read from the source text (the log or config line quoted, with its
repo@commit:path) or are arithmetic on those printed numbers - never the engine's output. Nothing here predicts a
row's throughput, and nothing fits or sets a band on set 5."""

from pathlib import Path

import pytest

from shardwise.engine.calibration.external import (EXTERNAL_FILE, EXTERNAL_FILE_2, EXTERNAL_FILE_3, EXTERNAL_FILE_4,
                                                   EXTERNAL_FILE_5, JUDGED_EXTERNAL_SETS, load_external_runs,
                                                   load_external_runs_2, load_external_runs_3, load_external_runs_4,
                                                   load_external_runs_5)
from shardwise.engine.calibration.runs import load_runs, used_runs
from support.external_file import ExternalFile

KNOWN_EXCLUSIONS = (
    "repeat run",  # MLPerf's result_1 ... of a system whose first run is used
    "precision not stated",  # v5.1 systems whose committed configs give the layout in FP8 and in NVFP4
    "NVFP4 precision is not modelled",  # v5.1 runs whose config sources config_common_fp4.sh
    "the layout of an earlier file's row",  # model/GPU/#GPUs/seq/precision/layout of the calibration data or sets 1-4
    "inconsistent batch",  # two systems whose committed config does not give the logged global batch
    "same configuration as the first-written system of this source and release",
    "same configuration measured with a newer release",
    "no measured throughput",  # a Dell v5.1 log that ends inside its first block
)
V30, V41 = "training_results_v3.0@63e326c400:", "training_results_v4.1@b87b9e396f:"
V50, V51 = "training_results_v5.0@0fdc28f013:", "training_results_v5.1@441d65f444:"

SET_5 = ExternalFile(EXTERNAL_FILE_5, load_external_runs_5)
_rows, _key, _run, _row = SET_5.rows, SET_5.key, SET_5.run, SET_5.row


def test_every_row_is_used_or_excluded_with_a_stated_reason():
    SET_5.assert_used_or_excluded(KNOWN_EXCLUSIONS, at_least=60)


def test_every_row_cites_a_result_file_and_its_layout_at_a_commit():
    for r in _rows():
        repo_commit, _, path = r["source_locator"].partition(":")
        assert repo_commit.startswith("mlcommons/training_results_v") and len(repo_commit.split("@")[1]) == 10, r
        assert "/results/" in path and "result_" in path, r
        assert "/config_" in path or "printed model config: TP" in path, r  # the config file, or the log's own dump


def test_set_5_never_reaches_the_fit_the_bands_or_sets_1_to_4():
    assert not any(r.key.startswith(EXTERNAL_FILE_5) for r in load_runs())
    assert not any(r.key.startswith(EXTERNAL_FILE_5) for r in used_runs())
    for file, load in ((EXTERNAL_FILE, load_external_runs), (EXTERNAL_FILE_2, load_external_runs_2),
                       (EXTERNAL_FILE_3, load_external_runs_3), (EXTERNAL_FILE_4, load_external_runs_4)):
        assert all(r.key.startswith(file + ":") for r in load())
    sources = {r.source for r in load_external_runs_5()}
    assert all(s.startswith("mlperf-training-v") for s in sources)
    earlier = load_runs() + load_external_runs() + load_external_runs_2() + load_external_runs_3() + load_external_runs_4()
    assert not sources & {r.source for r in earlier}


def test_no_used_row_repeats_a_layout_of_the_calibration_data_or_sets_1_to_4():
    def layout(r):
        return (r.model.name, r.cluster.gpu.id, r.cluster.num_gpus, r.setup.seq_len, r.setup.precision,
                r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.vpp, r.strategy.ep)
    earlier = load_runs() + load_external_runs() + load_external_runs_2() + load_external_runs_3() + load_external_runs_4()
    seen = {layout(r) for r in earlier if r.model and r.cluster and r.setup and r.strategy}
    for r in load_external_runs_5():
        assert not r.used or layout(r) not in seen, r.key


def test_no_run_of_set_4_or_a_republished_run_is_written_twice():
    # v4.1's NVIDIA/results/eos-dfw_n1452_ngc24.04_nemo/gpt3 logs print the same run_start/run_stop/block_start
    # timestamps as set 4's v4.0 files; Dell's v4.1 '-POWER' system re-prints its 8xXE9680x8H100 runs; v5.1's
    # Nebius/results/nebius_h200_n{64,128}/llama31_405b files are byte-identical to v5.0's nebius_soperator_8xH200 ones;
    # Dell's v5.1 1xXE9680x8H200 LoRA runs are its v5.0 XE9680x8H200 runs
    locators = [r["source_locator"] for r in _rows()]
    assert not any(V41 + "NVIDIA/results/eos-dfw_n1452" in s for s in locators)
    assert not any("8xXE9680x8H100-SXM-80GB-POWER" in s or "nebius_h200_n" in s for s in locators)
    assert not any(V51 + "Dell/results/1xXE9680x8H200-SXM-141GB/" in s for s in locators)
    assert sum(V50 + "Nebius/results/nebius_soperator_8xH200_n64" in s for s in locators) == 3


def test_set_5_is_judged_never_in_the_bands_it_judged_and_named_by_no_engine_module_but_the_loader():
    # Set 5 had its first run in session 9 (docs/performance.md, "Protocol for session 9"), judging v5 against v7:
    # neither is estimated on it (v8, written after that run, is: "Protocol for session 11"); no engine module but the
    # loader and the judged-set table names it.
    assert 5 in JUDGED_EXTERNAL_SETS
    from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS
    # session 12: challengers v9 and v10 take sets 1-8 as items (after their first runs)
    assert [m for m, sets in EXTERNAL_SETS_IN_BANDS.items() if 5 in sets] == ["v8", "v9", "v10", "v11", "v12"]
    root = Path(__file__).resolve().parents[3]
    for path in (root / "engine").rglob("*.py"):
        if path.name != "external.py":
            text = path.read_text(encoding="utf-8", errors="ignore")
            for name in ("external_runs_5", "EXTERNAL_FILE_5", "load_external_runs_5"):
                assert name not in text, (path, name)


# --- hand checks against quoted log and config lines ------------------------------------------------------------
def test_v50_nvidia_405b_on_8192_h100_from_the_printed_block_throughputs():
    # NVIDIA/results/eos-dfw_n1024_ngc25.01_nemo/llama31_405b/result_0.txt, MLLOG as printed: global_batch_size 1536,
    # gradient_accumulation_steps 24.0, max_sequence_length 8192; block_start samples_count 0, 46080, ..., 276480,
    # run_stop samples_count 322560; at each block_stop tracked_stats "throughput" (samples/s):
    # 290.6426746065762, 294.0806736384055, 293.18989754002547, 292.9100541440397, 291.73564449909094,
    # 292.06047563080705, 291.31013765976337
    thr = [290.6426746065762, 294.0806736384055, 293.18989754002547, 292.9100541440397, 291.73564449909094,
           292.06047563080705, 291.31013765976337]
    samples_per_s = 7 * 46080 / sum(46080 / t for t in thr)
    assert 7 * 46080 == 322560
    r = _run(_key(V50 + "NVIDIA/results/eos-dfw_n1024_ngc25.01_nemo/llama31_405b/result_0.txt"))
    assert r.used and r.model.name == "Llama-3.1-405B" and r.cluster.gpu.id == "h100-sxm"
    assert r.cluster.num_gpus == 1024 * 8  # systems/eos-dfw_n1024_ngc25.01_nemo.json: 1024 nodes x 8
    assert r.measured_tokens_per_gpu == pytest.approx(samples_per_s * 8192 / 8192, abs=0.01)
    # config_DGXH100_1024x8x24xtp8pp8cp2.sh: MINIBS=24, TENSOR_MODEL_PARALLEL=8, PIPELINE_MODEL_PARALLEL=8,
    # INTERLEAVED_PIPELINE=8, CONTEXT_PARALLEL=2, MICRO_BATCH_SIZE=1 -> DP = 8192 / 128 = 64, 24 x 64 = 1536
    assert (r.strategy.tp, r.strategy.pp, r.strategy.vpp, r.strategy.cp) == (8, 8, 8, 2)
    assert 24 * (8192 // 128) == 1536 == r.setup.global_batch and 1 * 24 * 64 == 1536
    assert r.setup.seq_len == 8192 and r.setup.precision == "fp8" and r.setup.mode == "full"


def test_v50_llama2_70b_lora_on_one_gb200_tray_pair_from_the_block_throughputs():
    # NVIDIA/results/tyche_ngpu8_ngc25.04_nemo/llama2_70b_lora/result_0.txt: block_start samples_count 0, 1536, 1920,
    # 2304, 2688, 3072, run_stop 3456; block throughputs 5.4458504086383135, 5.439941244245878, 5.437587294919485,
    # 5.433318770914578, 5.438512377369122, 5.438178512964896 samples/s
    blocks = [(1536, 5.4458504086383135), (384, 5.439941244245878), (384, 5.437587294919485),
              (384, 5.433318770914578), (384, 5.438512377369122), (384, 5.438178512964896)]
    samples_per_s = sum(n for n, _ in blocks) / sum(n / t for n, t in blocks)
    r = _run(_key(V50 + "NVIDIA/results/tyche_ngpu8_ngc25.04_nemo/llama2_70b_lora/result_0.txt"))
    assert r.used and r.setup.mode == "lora" and r.cluster.gpu.id == "gb200" and r.cluster.num_gpus == 2 * 4
    assert r.measured_tokens_per_gpu == pytest.approx(samples_per_s * 8192 / 8, abs=0.01)
    # config_GB200_2x4x1xtp1pp1cp1.sh: MINIBS=1, TP=1, CP=1 -> DP 8, global batch 8 (log: global_batch_size 8)
    assert (r.strategy.tp, r.strategy.cp, r.setup.global_batch) == (1, 1, 8)


def test_v51_lora_from_each_blocks_mean_step_time():
    # NVIDIA/results/tyche_ngpu72_ngc25.09_nemo/llama2_70b_lora/result_0.txt: global_batch_size 9; block_start/stop
    # steps 0->172, 172->215, 215->258, 258->301, 301->344, 344->387, each ending with mlperf_common's tracked_stats
    # train_step_time 0.19929369693594243, 0.1993456170230909, 0.19990511297662525, 0.19927819500011285,
    # 0.19996690134880632, 0.19975916041822042
    blocks = [(172, 0.19929369693594243), (43, 0.1993456170230909), (43, 0.19990511297662525),
              (43, 0.19927819500011285), (43, 0.19996690134880632), (43, 0.19975916041822042)]
    seconds = sum(k * t for k, t in blocks)
    r = _run(_key(V51 + "NVIDIA/results/tyche_ngpu72_ngc25.09_nemo/llama2_70b_lora/result_0.txt"))
    assert r.used and r.cluster.gpu.id == "gb200" and r.cluster.num_gpus == 18 * 4
    assert r.measured_tokens_per_gpu == pytest.approx(387 * 9 * 8192 / seconds / 72, abs=0.01)
    # nemo/config_GB200_18x4x1xtp1pp1cp8.sh: MINIBS=1, CP=8 (TP, PP default 1) -> DP = 72 / 8 = 9
    assert (r.strategy.tp, r.strategy.cp, r.setup.global_batch) == (1, 8, 9)


def test_v30_coreweave_gpt3_from_its_per_step_times():
    # NVIDIA_CoreWeave/results/coreweave_hgxh100_n192_ngc23.04_pytorch/gpt3/result_0.txt: one block_start ... block_stop
    # around the whole run, evaluations inside it; 200 tracked_stats train_step_timing values (the first three
    # 6.46591591835022, 6.2699384689331055, 6.284050941467285) summing to 1263.717 s; trained_samples 1258291200 tokens
    assert 200 * 3072 * 2048 == 1258291200
    r = _run(_key(V30 + "NVIDIA_CoreWeave/results/coreweave_hgxh100_n192_ngc23.04_pytorch/gpt3/result_0.txt"))
    assert r.used and r.source == "mlperf-training-v3.0-nvidia_coreweave" and r.cluster.num_gpus == 192 * 8
    assert r.measured_tokens_per_gpu == pytest.approx(1258291200 / 1263.717 / 1536, abs=0.01)
    # config_DGXH100_192x8x64x4x8_mbs1.sh: MINIBS=64, TENSOR_MODEL_PARALLEL=4, PIPELINE_MODEL_PARALLEL=8,
    # MICRO_BATCH_SIZE=1; config_common.sh INTERLEAVED_PIPELINE=12 -> DP 48, 64 x 48 = 3072 (log: 3072, GA 64)
    assert (r.strategy.tp, r.strategy.pp, r.strategy.vpp, r.setup.global_batch) == (4, 8, 12, 64 * 48)


def test_v41_oracle_gpt3_layout_printed_by_its_own_log():
    # Oracle/results/1536xBM.GPU.H100.8/gpt3/result_0.txt, the model config as printed (lines 6670-6675):
    # "micro_batch_size: 2", "global_batch_size: 3072", "tensor_model_parallel_size: 4",
    # "pipeline_model_parallel_size: 8", "virtual_pipeline_model_parallel_size: 4"; 26 training blocks of epoch_count
    # 50331648 tokens (8 steps x 3072 x 2048) in 1086.615 s; systems/1536xBM.GPU.H100.8.json: 192 nodes x 8
    assert 26 * 50331648 == 1308622848 == 26 * 8 * 3072 * 2048
    r = _run(_key(V41 + "Oracle/results/1536xBM.GPU.H100.8/gpt3/result_0.txt"))
    assert r.used and r.source == "mlperf-training-v4.1-oracle" and r.cluster.num_gpus == 1536
    assert r.measured_tokens_per_gpu == pytest.approx(1308622848 / 1086.615 / 1536, abs=0.01)
    assert (r.strategy.tp, r.strategy.pp, r.strategy.vpp, r.strategy.micro_batch) == (4, 8, 4, 2)
    assert 2 * 32 * (1536 // 32) == 3072 == r.setup.global_batch  # MBS x GA (log: 32) x DP


def test_v51_fp8_or_nvfp4_unknown_and_nvfp4_runs_are_written_and_excluded():
    # tyche_ngpu512_ngc25.09_nemo/config_GB200_128x4x144xtp4pp8cp2_cg.sh and ..._cg_fp4.sh give one layout; the log
    # names neither; hsg_ngpu2560's only matching config, config_GB200_640x4x24xtp4pp8cp2_cg_fp4.sh, is NVFP4
    ambiguous = _run(_key(V51 + "NVIDIA/results/tyche_ngpu512_ngc25.09_nemo/llama31_405b/result_0.txt"))
    assert ambiguous.status.startswith("excluded: precision not stated")
    nvfp4 = _run(_key(V51 + "NVIDIA/results/hsg_ngpu2560_ngc25.09_nemo/llama31_405b/result_0.txt"))
    assert nvfp4.status == "excluded: NVFP4 precision is not modelled (BF16/FP8 only)"


def test_families_with_several_gpu_counts():
    def counts(source, model, gpu):
        return sorted(r.cluster.num_gpus for r in load_external_runs_5()
                      if r.used and r.source == source and r.model.name == model and r.cluster.gpu.id == gpu)
    # IBM+CoreWeave+NVIDIA carina_ngpu{1024,1536,2048,2496}: one TP 4 / PP 8 / CP 2 / VP 8 layout (512 is set 1's layout)
    assert counts("mlperf-training-v5.0-ibm+coreweave+nvidia", "Llama-3.1-405B", "gb200") == [1024, 1536, 2048, 2496]
    assert counts("mlperf-training-v5.0", "Llama-2-70B", "gb200") == [8, 72, 144, 512]
    assert counts("mlperf-training-v5.0", "Llama-3.1-405B", "h100-sxm") == [2432, 2560, 8192]
    # repeats of a used system: written, excluded, never counted twice
    repeats = [r for r, row in zip(load_external_runs_5(), _rows()) if "REPEAT RUN" in row["notes"]]
    assert len(repeats) > 700 and not any(r.used for r in repeats)
