"""hogwild.train() from Python: both modes in one process, the result's contents, the row
callback (schema, order, an exception in it), the GIL released while training, and the same
run as the command line given the same options. Usage: python_train_test.py <train binary>."""

import csv
import math
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import hogwild
import python_testing as testing

TRAIN_BINARY = None  # the `train` command, from the command line

ROW_KEYS = {"wall_time_s", "kind", "epoch", "step", "examples_seen", "worker", "train_loss",
            "test_loss", "test_accuracy", "staleness_mean", "staleness_max", "lr", "delay_s",
            "remote_staleness_mean", "remote_staleness_max", "ema_test_accuracy", "eval_seconds",
            "exchanges", "bytes_per_worker", "outer_step_norm", "dropped"}


class Train(unittest.TestCase):

    def setUp(self):
        self.x, self.y = testing.synthetic(2000)
        self.test_x, self.test_y = testing.synthetic(500, seed=1)

    def test_both_modes_in_one_process_learn(self):
        for mode in ("async", "sync"):
            with self.subTest(mode=mode):
                rows = []
                result = hogwild.train(self.x, self.y, self.test_x, self.test_y, mode=mode,
                                       hidden=[32], workers=2, epochs=8, log_every=5,
                                       on_log_row=rows.append)
                self.assertEqual(result.mode, mode)
                self.assertEqual(result.workers, 2)
                self.assertEqual(result.examples, 8 * 2000)
                self.assertGreater(result.steps, 0)
                self.assertGreater(result.examples_per_s, 0)
                self.assertGreater(result.wall_time_s, 0)
                self.assertEqual(result.params.dtype, np.float32)
                self.assertEqual(result.params.shape, (testing.mlp_params(20, [32], 4),))
                self.assertTrue(np.isfinite(result.params).all())
                # 4 classes: chance is 25%; the noisy linear rule is learnt to ~80%.
                self.assertGreater(result.final_test_accuracy, 0.7, result)
                train_losses = [r["train_loss"] for r in rows if r["kind"] == "train"]
                self.assertLess(np.mean(train_losses[-4:]), 0.75 * np.mean(train_losses[:4]),
                                f"the loss did not fall: {train_losses}")
                self.assertEqual(result.staleness_histogram.shape, (65,))
                # One entry per update a worker recorded: every worker's in every sync step.
                self.assertEqual(int(result.staleness_histogram.sum()),
                                 result.steps * (1 if mode == "async" else 2))
                if mode == "sync":
                    self.assertEqual(result.staleness_max, 0)

    def test_cnn_bn_trains_with_its_moving_statistics_in_params(self):
        # The 20 features as 1x4x5 images: conv1 832, bn1 128 (gamma, beta, moving mean and
        # variance of 32 channels), conv2 51,264, bn2 256, dense 64->256 16,640, bn3 1,024,
        # dense 256->4 1,028.
        x, test_x = self.x.reshape(-1, 1, 4, 5), self.test_x.reshape(-1, 1, 4, 5)
        result = hogwild.train(x, self.y, test_x, self.test_y, mode="sync", model="cnn_bn",
                               workers=2, epochs=2, lr=0.05, momentum=0.9, bn_momentum=0.2)
        self.assertEqual(result.params.shape, (71172,))
        self.assertTrue(np.isfinite(result.params).all())
        moving_var = result.params[928:960]
        self.assertTrue((moving_var > 0).all() and (moving_var != 1).any(), moving_var)
        self.assertGreater(result.final_test_accuracy, 0.5, result)

    def test_the_policies_between_the_modes_run_from_python_and_learn(self):
        for mode, option in (("ssp", {"staleness_bound": 0}), ("backup", {"backup_workers": 1}),
                             ("local_sgd", {"average_every": 2})):
            with self.subTest(mode=mode):
                result = hogwild.train(self.x, self.y, self.test_x, self.test_y, mode=mode,
                                       hidden=[32], workers=2, epochs=8, **option)
                self.assertEqual(result.mode, mode)
                self.assertEqual(result.examples, 8 * 2000)
                self.assertTrue(np.isfinite(result.params).all())
                self.assertGreater(result.final_test_accuracy, 0.7, result)

    def test_local_sgd_takes_an_outer_optimizer(self):
        # DiLoCo's outer step (sync/outer_optimizer.h) on the same replicas as plain averaging:
        # another model, the same one every time (workers average in a fixed order), and still
        # a learnt one. The explicit defaults are plain averaging, bitwise.
        common = {"mode": "local_sgd", "hidden": [32], "workers": 2, "epochs": 4,
                  "average_every": 4}
        diloco = {"outer_lr": 0.7, "outer_momentum": 0.9, "outer_nesterov": True}
        plain = hogwild.train(self.x, self.y, self.test_x, self.test_y, **common)
        defaults = hogwild.train(self.x, self.y, self.test_x, self.test_y, outer_lr=1.0,
                                 outer_momentum=0.0, outer_nesterov=False, **common)
        np.testing.assert_array_equal(defaults.params, plain.params)
        first = hogwild.train(self.x, self.y, self.test_x, self.test_y, **diloco, **common)
        again = hogwild.train(self.x, self.y, self.test_x, self.test_y, **diloco, **common)
        np.testing.assert_array_equal(first.params, again.params)
        self.assertFalse(np.allclose(first.params, plain.params, rtol=0, atol=1e-3))
        self.assertGreater(first.final_test_accuracy, 0.7, first)
        # outer_nesterov is read: the heavy ball without Nesterov's look-ahead is another model.
        heavy_ball = hogwild.train(self.x, self.y, self.test_x, self.test_y, outer_lr=0.7,
                                   outer_momentum=0.9, **common)
        self.assertFalse(np.allclose(first.params, heavy_ball.params, rtol=0, atol=1e-3))

    def test_local_sgd_takes_streaming_diloco_options(self):
        # Streaming DiLoCo (sync/streaming.h): another model, the same every time, still a learnt
        # one; a value out of range is refused naming the keyword, as is a fragment count in
        # another mode.
        common = {"mode": "local_sgd", "hidden": [32], "workers": 2, "epochs": 4,
                  "average_every": 4}
        streaming = {"fragments": 2, "overlap_steps": 1, "mix_alpha": 0.5}
        plain = hogwild.train(self.x, self.y, self.test_x, self.test_y, **common)
        first = hogwild.train(self.x, self.y, self.test_x, self.test_y, **streaming, **common)
        again = hogwild.train(self.x, self.y, self.test_x, self.test_y, **streaming, **common)
        np.testing.assert_array_equal(first.params, again.params)
        self.assertFalse(np.allclose(first.params, plain.params, rtol=0, atol=1e-3))
        self.assertGreater(first.final_test_accuracy, 0.7, first)
        with self.assertRaisesRegex(ValueError, r"^mix_alpha=1 is out of range; it must be in "
                                    r"\[0, 1\)"):
            hogwild.train(self.x, self.y, mix_alpha=1.0, **common)
        with self.assertRaisesRegex(ValueError, "^fragments has no effect with mode='sync'"):
            hogwild.train(self.x, self.y, mode="sync", fragments=2)

    def test_async_local_sgd_takes_delayed_nesterov_and_dynamic_local_updates(self):
        # Asynchronous local SGD (sync/async_local_sgd.h). One worker is sequential, so
        # deterministic: with the default outer step (plain, lr 1) each push makes theta the
        # replica exactly, which is async SGD with one worker, bitwise, whatever H is.
        one = {"hidden": [32], "workers": 1, "epochs": 2}
        async_run = hogwild.train(self.x, self.y, self.test_x, self.test_y, mode="async", **one)
        local_run = hogwild.train(self.x, self.y, self.test_x, self.test_y,
                                  mode="async_local_sgd", average_every=4, **one)
        np.testing.assert_array_equal(local_run.params, async_run.params)
        # delayed_nesterov is read: with one worker and the same outer momentum, advancing the
        # momentum every 2 pushes trains another model than every push, the same every time.
        outer = {"mode": "async_local_sgd", "average_every": 4, "outer_lr": 0.7,
                 "outer_momentum": 0.9, "outer_nesterov": True, **one}
        naive = hogwild.train(self.x, self.y, self.test_x, self.test_y, **outer)
        delayed = hogwild.train(self.x, self.y, self.test_x, self.test_y, delayed_nesterov=2,
                                **outer)
        again = hogwild.train(self.x, self.y, self.test_x, self.test_y, delayed_nesterov=2,
                              **outer)
        np.testing.assert_array_equal(delayed.params, again.params)
        self.assertFalse(np.allclose(delayed.params, naive.params, rtol=0, atol=1e-3))
        # Two workers with the delayed Nesterov, with and without dynamic local updates, learn.
        # The global step counts every worker's local steps: each walks its own 1000 examples
        # of each epoch in ceil(1000 / 64) = 16 steps.
        two = {**outer, "workers": 2, "epochs": 4, "delayed_nesterov": 2}
        for dylu in (False, True):
            with self.subTest(dynamic_local_updates=dylu):
                result = hogwild.train(self.x, self.y, self.test_x, self.test_y,
                                       dynamic_local_updates=dylu, **two)
                self.assertEqual(result.mode, "async_local_sgd")
                self.assertEqual(result.examples, 4 * 2000)
                self.assertEqual(result.steps, 4 * 2 * 16)
                self.assertTrue(np.isfinite(result.params).all())
                self.assertGreater(result.final_test_accuracy, 0.7, result)

    def test_max_delay_drops_the_updates_staler_than_it(self):
        # Every worker step is an update without a bound; with max_delay=1 an update staler
        # than 1 is dropped, not applied: steps + dropped is the same count of worker steps, every
        # example still counts, and no applied update is staler than the bound. Which updates
        # are stale is the scheduler's doing: 8 workers of a 2-layer mlp make some on any number
        # of cores (more on a loaded machine), and a few tries are allowed for a run that drops.
        common = {"mode": "async", "hidden": [256, 256], "workers": 8, "batch_size": 16,
                  "epochs": 2}
        worker_steps = 8 * 2 * math.ceil(2000 / 8 / 16)
        plain = hogwild.train(self.x, self.y, self.test_x, self.test_y, **common)
        self.assertEqual((plain.steps, plain.dropped), (worker_steps, 0))
        for _ in range(5):
            bounded = hogwild.train(self.x, self.y, self.test_x, self.test_y, max_delay=1,
                                    **common)
            self.assertEqual(bounded.steps + bounded.dropped, worker_steps, bounded)
            self.assertEqual(bounded.examples, 2 * 2000)
            self.assertLessEqual(bounded.staleness_max, 1)
            self.assertEqual(int(bounded.staleness_histogram.sum()), bounded.steps)
            if bounded.dropped > 0:
                break
        self.assertGreater(bounded.dropped, 0, "5 runs of 8 workers, none staler than 1")
        self.assertGreater(bounded.final_test_accuracy, 0.7, bounded)

    def test_the_result_counts_backups_dropped_gradients(self):
        # backup_workers=1: each step applies the first gradient of 2 and drops the other.
        result = hogwild.train(self.x, self.y, mode="backup", workers=2, backup_workers=1,
                               hidden=[32], epochs=2)
        self.assertEqual(result.dropped, result.steps)
        self.assertGreater(result.steps, 0)

    def test_delay_adaptive_lr_trains_and_learns(self):
        result = hogwild.train(self.x, self.y, self.test_x, self.test_y, mode="async",
                               hidden=[32], workers=4, epochs=8, delay_adaptive_lr=True)
        self.assertEqual((result.examples, result.dropped), (8 * 2000, 0))
        self.assertGreater(result.final_test_accuracy, 0.7, result)

    def test_the_optimizers_run_from_python_and_learn(self):
        for mode, optimizer, extra in (("async", "adam", {"optimizer_state": "shared"}),
                                       ("sync", "adamw", {"weight_decay": 0.01}),
                                       ("async", "rmsprop", {}), ("sync", "adagrad", {"lr": 0.03}),
                                       ("async", "nesterov", {"momentum": 0.9, "lr": 0.02})):
            with self.subTest(mode=mode, optimizer=optimizer):
                options = {"lr": 0.003, **extra}
                result = hogwild.train(self.x, self.y, self.test_x, self.test_y, mode=mode,
                                       optimizer=optimizer, hidden=[32], workers=2, epochs=4,
                                       **options)
                self.assertTrue(np.isfinite(result.params).all())
                self.assertGreater(result.final_test_accuracy, 0.7, result)

    def test_a_run_that_diverges_on_its_last_step_is_an_error(self):
        # One full-batch step at a huge rate: the update leaves finite parameters whose outputs
        # overflow, which only the final check sees; never a result with a nan test loss.
        with self.assertRaises(ValueError) as caught:
            hogwild.train(self.x, self.y, self.test_x, self.test_y, workers=1, epochs=1,
                          batch_size=2000, lr=1e38)
        self.assertEqual(str(caught.exception),
                         "training diverged: the final test loss is nan at global step 1 "
                         "(learning rate 1e+38); lower lr (or weight_decay or momentum)")

    def test_batch_norm_with_one_example_per_tower_is_refused(self):
        x = self.x.reshape(-1, 1, 4, 5)
        with self.assertRaises(ValueError) as caught:
            hogwild.train(x, self.y, model="cnn_bn", workers=1, batch_size=1, epochs=1)
        self.assertEqual(str(caught.exception),
                         "model=cnn_bn with batch_size=1 leaves 1 example per tower; batch norm "
                         "needs at least 2 (one example has zero variance, and the model cannot "
                         "learn): give batch_size of at least 2")

    def test_rows_follow_the_logs_schema_in_order(self):
        for mode in ("async", "sync"):
            with self.subTest(mode=mode):
                rows = []
                result = hogwild.train(self.x, self.y, self.test_x, self.test_y, mode=mode,
                                       hidden=[16], workers=3, epochs=2, log_every=1,
                                       eval_every=10, on_log_row=rows.append)
                self.assertGreater(len(rows), 50)
                for i, row in enumerate(rows):
                    self.assertEqual(set(row), ROW_KEYS)
                    self.assertIn(row["kind"], ("train", "eval"))
                    if row["kind"] == "eval":
                        self.assertEqual(row["worker"], -1)
                        self.assertTrue(0 <= row["test_accuracy"] <= 1)
                        self.assertTrue(math.isfinite(row["test_loss"]))
                    else:
                        self.assertIn(row["worker"], (0, 1, 2))
                        self.assertIsNone(row["test_loss"])
                        self.assertIsNone(row["test_accuracy"])
                    if i:
                        self.assertGreaterEqual(row["step"], rows[i - 1]["step"], f"row {i}")
                        self.assertGreaterEqual(row["examples_seen"],
                                                rows[i - 1]["examples_seen"], f"row {i}")
                evals = [r for r in rows if r["kind"] == "eval"]
                self.assertEqual(evals[-1]["step"], result.steps)
                self.assertEqual(evals[-1]["test_accuracy"], result.final_test_accuracy)

    def test_one_worker_runs_are_reproducible_and_the_modes_agree(self):
        # One worker: async and sync apply the same updates in the same order
        # (//tests:sync_equivalence_test), and a seed fixes everything.
        options = dict(hidden=[16], workers=1, epochs=2, seed=7)
        sync = hogwild.train(self.x, self.y, mode="sync", **options)
        again = hogwild.train(self.x, self.y, mode="sync", **options)
        run_async = hogwild.train(self.x, self.y, mode="async", **options)
        other_seed = hogwild.train(self.x, self.y, mode="sync", **{**options, "seed": 8})
        np.testing.assert_array_equal(sync.params, again.params)
        np.testing.assert_array_equal(sync.params, run_async.params)
        self.assertFalse(np.array_equal(sync.params, other_seed.params))

    def test_an_exception_in_the_callback_stops_training_and_is_raised(self):
        for mode in ("async", "sync"):
            with self.subTest(mode=mode):
                calls = []

                def on_row(row):
                    calls.append(row)
                    if len(calls) == 3:
                        raise ZeroDivisionError("the callback's own error")

                started = time.monotonic()
                with self.assertRaisesRegex(ZeroDivisionError, "the callback's own error"):
                    hogwild.train(self.x, self.y, mode=mode, hidden=[16], workers=2,
                                  epochs=1000, log_every=1, on_log_row=on_row)
                # 1000 epochs would take minutes: the error stopped the workers.
                self.assertLess(time.monotonic() - started, 20)
                self.assertEqual(len(calls), 3, "the callback was called after it raised")
        # The process is healthy afterwards.
        result = hogwild.train(self.x, self.y, hidden=[16], epochs=1, workers=2)
        self.assertEqual(result.examples, 2000)

    def test_the_gil_is_released_while_training(self):
        ticks = []
        stop = threading.Event()

        def ticker():
            while not stop.is_set():
                ticks.append(time.monotonic())
                time.sleep(0.001)

        thread = threading.Thread(target=ticker)
        thread.start()
        try:
            time.sleep(0.05)
            before = len(ticks)
            started = time.monotonic()
            hogwild.train(self.x, self.y, hidden=[256, 256], workers=2, epochs=60)
            during = [t for t in ticks[before:] if t >= started]
            elapsed = time.monotonic() - started
        finally:
            stop.set()
            thread.join()
        # With the GIL held for the whole call, the ticker could not run at all meanwhile.
        self.assertGreater(elapsed, 0.2, "training too short to tell")
        self.assertGreater(len(during), 20, f"{len(during)} ticks in {elapsed:.2f} s")

    def test_cifar10_files_train_a_cnn_on_3x32x32_images(self):
        # Small CIFAR-10 binary batches (2 records each): label byte, then 3072 pixel bytes.
        with tempfile.TemporaryDirectory() as data_dir:
            rng = np.random.default_rng(0)
            for name in [f"data_batch_{b}.bin" for b in range(1, 6)] + ["test_batch.bin"]:
                records = [bytes([label]) + rng.integers(0, 256, 3072, np.uint8).tobytes()
                           for label in (3, 7)]
                with open(f"{data_dir}/{name}", "wb") as f:
                    f.write(b"".join(records))
            result = hogwild.train(dataset="cifar10", data_dir=data_dir, model="cnn",
                                   workers=1, epochs=1, batch_size=2)
            self.assertEqual(result.examples, 10)
            # conv 3->32, conv 32->64, dense 64x8x8->256, dense 256->10
            self.assertEqual(result.params.shape, (1105098,))
            with open(f"{data_dir}/test_batch.bin", "ab") as f:
                f.write(b"\x01")
            with self.assertRaisesRegex(ValueError, "test_batch.bin: record 2 is truncated"):
                hogwild.train(dataset="cifar10", data_dir=data_dir, model="cnn", workers=1,
                              epochs=1, batch_size=2)

    def test_same_options_give_the_command_lines_run(self):
        testing.skip_without_fashion_mnist(self)
        options = ["--train_examples=2000", "--epochs=1", "--workers=1", "--log_every=5",
                    "--eval_every=10"]
        with tempfile.TemporaryDirectory() as tmp:
            log = f"{tmp}/cli.csv"
            cli = subprocess.run([TRAIN_BINARY, *options, f"--log={log}"], capture_output=True,
                                 text=True, check=True)
            with open(log) as f:
                cli_rows = list(csv.DictReader(f))
        rows = []
        result = hogwild.train(dataset="fashion_mnist", train_examples=2000, epochs=1,
                               workers=1, log_every=5, eval_every=10, on_log_row=rows.append)
        self.assertIn(f"final test accuracy {100 * result.final_test_accuracy:.2f}%",
                      cli.stdout)
        self.assertIn(f"test loss {result.final_test_loss:.4f}", cli.stdout)
        self.assertEqual(len(rows), len(cli_rows))
        for row, cli_row in zip(rows, cli_rows):
            for key in ("kind", "step", "examples_seen", "worker"):
                self.assertEqual(str(row[key]), cli_row[key], key)
            for key in ("train_loss", "test_loss", "test_accuracy", "lr"):
                if row[key] is None:
                    self.assertEqual(cli_row[key], "")
                else:
                    self.assertAlmostEqual(row[key], float(cli_row[key]),
                                           delta=1e-5 * abs(row[key]) + 1e-12, msg=key)


if __name__ == "__main__":
    TRAIN_BINARY = sys.argv.pop(1)
    testing.fail_if_hung()
    unittest.main()
