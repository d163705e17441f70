#!/usr/bin/env python3
"""Unit test of compare_parity.py on synthetic outputs (make_fixture.py)."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_parity  # noqa: E402
import make_fixture  # noqa: E402


def run(folder):
    with redirect_stdout(io.StringIO()):
        return compare_parity.build_report(folder)


class CompareParityTest(unittest.TestCase):
    def test_parses_nccl_tests_rows_and_footer(self):
        text = make_fixture.nccl_tests_text("alltoall", make_fixture.rows("alltoall"))
        t = compare_parity.parse_nccl_tests(text)
        self.assertEqual(t["version"], "nccl-tests version 2.19.6 nccl-headers=22809 "
                         "nccl-library=22809")
        self.assertEqual(t["wrong"], 0)
        row = t["rows"][1 << 20]
        self.assertEqual(row["count"], 65536)
        self.assertIsNone(row["ip"]["wrong"])  # N/A
        self.assertEqual(row["oop"]["wrong"], 0)
        self.assertAlmostEqual(row["oop"]["busbw"], 0.75 * row["oop"]["algbw"], delta=0.01)

    def test_identical_runs_pass(self):
        with tempfile.TemporaryDirectory() as d:
            make_fixture.write(d)
            report, status = run(d)
        self.assertEqual(status, 0)
        self.assertIn("busbw parity: PASS; small-message latency: PASS", report)
        self.assertIn("### all_reduce, 4 processes", report)

    def test_slower_large_messages_fail_bandwidth_parity(self):
        with tempfile.TemporaryDirectory() as d:
            make_fixture.write(d, {"reduce_scatter": 1.05})
            report, status = run(d)
        self.assertEqual(status, 1)
        self.assertIn("busbw parity: FAIL", report)
        self.assertIn("| reduce_scatter |", report)
        self.assertIn("**!**", report)
        self.assertIn("**NO**", report)

    def test_within_tolerance_passes(self):
        with tempfile.TemporaryDirectory() as d:
            make_fixture.write(d, {"broadcast": 1.01})
            _, status = run(d)
        self.assertEqual(status, 0)

    def test_small_message_latency_regression_fails(self):
        # 10% slower everywhere: both criteria fail for that collective.
        with tempfile.TemporaryDirectory() as d:
            make_fixture.write(d, {"all_gather": 1.10})
            report, status = run(d)
        self.assertEqual(status, 1)
        self.assertIn("small-message latency: FAIL", report)

    def test_missing_output_is_reported(self):
        with tempfile.TemporaryDirectory() as d:
            make_fixture.write(d)
            os.remove(os.path.join(d, "commlens_sendrecv.json"))
            report, status = run(d)
        self.assertEqual(status, 2)
        self.assertIn("missing: sendrecv", report)

    def tagged_runs(self, folder, scales):
        """One run per scale, written as <stem>.small<k>.<ext> (bench.sh's names)."""
        for k, scale in enumerate(scales, 1):
            with tempfile.TemporaryDirectory() as d:
                make_fixture.write(d, {"all_gather": scale})
                for name in os.listdir(d):
                    stem, ext = name.rsplit(".", 1)
                    os.rename(os.path.join(d, name), os.path.join(folder, f"{stem}.small{k}.{ext}"))

    def test_median_of_runs_ignores_one_outlier(self):
        with tempfile.TemporaryDirectory() as d:
            self.tagged_runs(d, [1.0, 1.10, 1.0])
            report, status = run(d)
        self.assertEqual(status, 0)
        self.assertIn("sizes 8..67108864 x2, iters 20, warmup 5, check True: 3 run(s)", report)
        self.assertIn("| 0.0%/9.1% |", report)  # all_gather's spread: ours moved, nccl-tests not

    def test_median_follows_the_majority_of_runs(self):
        with tempfile.TemporaryDirectory() as d:
            self.tagged_runs(d, [1.10, 1.10, 1.0])
            report, status = run(d)
            _, best_status = compare_parity.build_report(d, "best")
        self.assertEqual(status, 1)
        self.assertIn("| all_gather | 7 | 9.09%", report)
        self.assertEqual(best_status, 0)  # the best run alone matches

    def test_merges_raw_folders_of_separate_calls(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            make_fixture.write(a)
            for name in os.listdir(a):
                if name.startswith("commlens_"):
                    os.rename(os.path.join(a, name), os.path.join(b, name))
            with redirect_stdout(io.StringIO()):
                report, status = compare_parity.build_report([a, b])
        self.assertEqual(status, 0)
        self.assertIn("### all_reduce, 4 processes", report)

    def test_rejects_foreign_json(self):
        with self.assertRaises(ValueError):
            compare_parity.parse_commlens({"schema": "other"})


if __name__ == "__main__":
    unittest.main()
