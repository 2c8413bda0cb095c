"""Logs saved in other encodings: Windows PowerShell 5.1's `>` (Out-File) writes UTF-16LE with a BOM, Notepad
UTF-8 with a BOM. The bytes below are built by hand from a two-line Megatron-LM excerpt (format:
megatron/training/training.py training_log, NVIDIA/Megatron-LM d98e8a64); the expected values are read off it."""

import codecs

import pytest

from shardwise.engine.training_logs import decode_log, read_log

EXCERPT = ("  seq_length ...................................... 4096\n"
           " iteration       20/     100 | elapsed time per iteration (ms): 9000.0 | global batch size:   128 |\n")


@pytest.mark.parametrize("data", [
    codecs.BOM_UTF16_LE + EXCERPT.encode("utf-16-le"),  # PowerShell 5.1 `>`
    codecs.BOM_UTF16_BE + EXCERPT.encode("utf-16-be"),
    codecs.BOM_UTF8 + EXCERPT.encode("utf-8"),  # Notepad's "UTF-8 with BOM"
    codecs.BOM_UTF32_LE + EXCERPT.encode("utf-32-le"),  # begins with FF FE like UTF-16LE: told apart
    EXCERPT.encode("utf-16-le"),  # no BOM: a NUL after every ASCII byte
    EXCERPT.encode("utf-8"),
])
def test_every_encoding_decodes_to_the_same_text(data):
    assert decode_log(data) == EXCERPT


def test_a_utf16_log_reads_as_its_utf8_copy_does():
    r = read_log(decode_log(codecs.BOM_UTF16_LE + EXCERPT.encode("utf-16-le")))
    # one iteration at 9000.0 ms = 9.0 s; seq_length 4096 and global batch 128 as printed
    assert (r.step_s, r.seq_len, r.global_batch) == (9.0, 4096, 128)


def test_a_pasted_string_that_kept_its_bom_reads_its_first_line():
    # A paste trimmed of its leading spaces starts with the argument line itself: behind a U+FEFF it did not
    # start a line any more and was skipped (seq_len unread).
    assert read_log("\ufeff" + EXCERPT.lstrip()).seq_len == 4096


def test_non_ascii_bytes_in_a_utf8_log_are_not_taken_for_utf16():
    text = "loss curve ▁▂▃ µ-batch\n" + EXCERPT
    assert decode_log(text.encode("utf-8")) == text


@pytest.mark.parametrize("client_read", [
    lambda data: data.decode("latin-1"),  # one byte per character: exact
    lambda data: data.decode("utf-8", errors="replace"),  # the BOM's FF FE become U+FFFD, the NULs stay
])
def test_a_utf16_file_a_client_read_one_byte_per_character_reads_as_the_log(client_read):
    # What a REST client or a chat paste sends when it read a PowerShell `>` log without decoding it.
    sent = client_read(codecs.BOM_UTF16_LE + EXCERPT.encode("utf-16-le"))
    assert "\x00" in sent
    r = read_log(sent)
    assert (r.step_s, r.seq_len, r.global_batch) == (9.0, 4096, 128)
