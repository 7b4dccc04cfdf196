"""hogwild.train() refuses bad arrays and options with a Python exception naming the problem
(TypeError for a wrong type or dtype, ValueError for wrong shapes, contents and options,
RuntimeError for the trainer's other failures), never a crash, and stays usable afterwards."""

import os
import tempfile
import unittest

import numpy as np

import hogwild
import python_testing as testing


class BadInput(unittest.TestCase):

    def setUp(self):
        self.x, self.y = testing.synthetic(200, dim=6, classes=3)

    def refuses(self, exception, needles, *args, **kwargs):
        kwargs.setdefault("epochs", 1)
        kwargs.setdefault("workers", 2)
        kwargs.setdefault("hidden", [8])
        with self.assertRaises(exception) as caught:
            hogwild.train(*args, **kwargs)
        message = str(caught.exception)
        for needle in needles:
            self.assertIn(needle, message)
        return message

    def test_wrong_dtypes_are_type_errors(self):
        self.refuses(TypeError, ["x has dtype float64", "astype(numpy.float32)"],
                     self.x.astype(np.float64), self.y)
        self.refuses(TypeError, ["x has dtype >f4"], self.x.astype(">f4"), self.y)
        self.refuses(TypeError, ["x must be a numpy.ndarray", "list"], self.x.tolist(), self.y)
        self.refuses(TypeError, ["y has dtype float32", "integers"], self.x,
                     self.y.astype(np.float32))
        self.refuses(TypeError, ["test_y has dtype bool"], self.x, self.y, self.x,
                     self.y.astype(bool))
        self.refuses(TypeError, ["workers must be an int", "str"], self.x, self.y, workers="2")
        self.refuses(TypeError, ["on_log_row must be callable"], self.x, self.y, on_log_row=3)

    def test_any_integer_label_dtype_is_accepted(self):
        for dtype in (np.uint8, np.int16, np.int32, np.uint64):
            with self.subTest(dtype=dtype):
                result = hogwild.train(self.x, self.y.astype(dtype), epochs=1, workers=1,
                                       hidden=[8])
                self.assertEqual(result.examples, 200)

    def test_wrong_shapes(self):
        self.refuses(ValueError, ["x has shape (200, 2, 3)", "[N, D] or images [N, C, H, W]",
                                  "x[:, None]"], self.x.reshape(200, 2, 3), self.y)
        self.refuses(ValueError, ["x has shape (1200,)"], self.x.reshape(-1), self.y)
        self.refuses(ValueError, ["y has shape (200, 1)", "1-D"], self.x, self.y[:, None])
        self.refuses(ValueError, ["x holds no examples"], self.x[:0], self.y[:0], num_classes=3)
        self.refuses(ValueError, ["y holds no labels"], self.x[:0], self.y[:0])
        self.refuses(ValueError, ["test_x's examples have shape 3 but x's have 6"], self.x,
                     self.y, self.x[:, :3].copy(), self.y)

    def test_mismatched_lengths(self):
        self.refuses(ValueError, ["x holds 200 examples but y holds 199 labels"], self.x,
                     self.y[:199])
        self.refuses(ValueError, ["test_x holds 200 examples but test_y holds 10 labels"],
                     self.x, self.y, self.x, self.y[:10])
        self.refuses(ValueError, ["give both test_x and test_y"], self.x, self.y, self.x)

    def test_non_contiguous_arrays(self):
        wide = np.zeros((200, 12), np.float32)
        self.refuses(ValueError, ["x is not C-contiguous", "numpy.ascontiguousarray(x)"],
                     wide[:, ::2], self.y)
        self.refuses(ValueError, ["x is not C-contiguous"], np.asfortranarray(self.x), self.y)
        self.refuses(ValueError, ["y is not C-contiguous"], self.x,
                     np.repeat(self.y, 2)[::2])

    def test_labels_out_of_range(self):
        y = self.y.copy()
        y[17] = 7
        self.refuses(ValueError, ["y[17] = 7 is outside [0, 3)", "num_classes"], self.x, y,
                     num_classes=3)
        y[17] = -1
        self.refuses(ValueError, ["y[17] = -1 is negative"], self.x, y)
        test_y = self.y.copy()
        test_y[5] = 3
        self.refuses(ValueError, ["test_y[5] = 3 is outside [0, 3)"], self.x, self.y, self.x,
                     test_y, num_classes=3)
        self.refuses(ValueError, ["num_classes=0 is out of range"], self.x, self.y,
                     num_classes=0)

    def test_non_finite_features(self):
        x = self.x.copy()
        x[4, 2] = np.nan
        self.refuses(ValueError, ["x holds nan in example 4 (feature 2)"], x, self.y)
        x[4, 2] = -np.inf
        self.refuses(ValueError, ["x holds -inf in example 4"], x, self.y)

    def test_bad_options_name_the_keyword(self):
        d = (self.x, self.y)
        self.refuses(ValueError, ["batch_size=0 is out of range"], *d, batch_size=0)
        self.refuses(ValueError, ["workers=0 is out of range"], *d, workers=0)
        self.refuses(ValueError, ["workers=100000 is out of range", "[1, 4096]"], *d,
                     workers=100000)
        self.refuses(ValueError, ["lr=-1 is out of range"], *d, lr=-1)
        self.refuses(ValueError, ["lr=1e-50 is outside float32's range"], *d, lr=1e-50)
        self.refuses(ValueError, ["momentum=1.5 is out of range"], *d, momentum=1.5)
        self.refuses(ValueError, ["unknown optimizer 'adamax'"], *d, optimizer="adamax")
        self.refuses(ValueError, ["lr_scaling=cubic is unknown"], *d, lr_scaling="cubic")
        self.refuses(ValueError, ["clip_global_norm=-1 is out of range"], *d,
                     clip_global_norm=-1.0)
        self.refuses(ValueError, ["lr_warmup_steps=-1 is out of range"], *d, lr_warmup_steps=-1)
        self.refuses(ValueError, ["drop_last is not available with checkpoint_dir yet (a "
                                  "checkpoint does not record it"], *d, drop_last=True,
                     checkpoint_dir="/tmp/hogwild_drop_last_ckpt")
        self.refuses(ValueError, ["bn_momentum=0.2 has no effect with model mlp"], *d,
                     bn_momentum=0.2)
        self.refuses(ValueError, ["optimizer_state='both' is not an optimizer state"], *d,
                     optimizer_state="both")
        self.refuses(ValueError, ["adam_beta2=1 is out of range"], *d, optimizer="adam",
                     adam_beta2=1.0)
        self.refuses(ValueError, ["optimizer_state='shared' has no effect in sync mode"], *d,
                     mode="sync", optimizer="adam", optimizer_state="shared")
        # Typed at their default values where nothing reads them: refused all the same, as
        # the command line does (a no-op keyword must not look like it took effect).
        self.refuses(ValueError, ["adam_beta1=0.9 has no effect with optimizer sgd",
                                  "read by adam, adamw"], *d, adam_beta1=0.9)
        self.refuses(ValueError, ["momentum=0.0 has no effect with optimizer adam"], *d,
                     optimizer="adam", momentum=0.0)
        self.refuses(ValueError, ["ema_num_updates=True has no effect without ema_decay"], *d,
                     ema_num_updates=True)
        self.refuses(ValueError, ["weight_decay_biases=True has no effect without "
                                  "weight_decay"], *d, weight_decay_biases=True)
        self.refuses(ValueError, ["optimizer_state='per_worker' has no effect in sync mode"],
                     *d, mode="sync", optimizer_state="per_worker")
        self.refuses(ValueError, ["lr_reference_batch=256 has no effect with lr_scaling='none'"],
                     *d, lr_reference_batch=256)
        self.refuses(ValueError, ["log_every=10 has no effect without log or on_log_row"], *d,
                     log_every=10)
        self.refuses(ValueError, ['unknown mode "hogwild"'], *d, mode="hogwild")
        self.refuses(ValueError, ["lr_schedule=cosine is unknown"], *d, lr_schedule="cosine")
        self.refuses(ValueError, ["nope"], *d, model="nope", hidden=None)
        self.refuses(ValueError, ["hidden has no effect with model='logreg'"], *d,
                     model="logreg")
        self.refuses(ValueError, ["lr_decay_rate has no effect with lr_schedule='constant'"],
                     *d, lr_decay_rate=0.5)
        self.refuses(ValueError, ["staleness_aware_lr"], *d, mode="sync",
                     staleness_aware_lr=True)
        self.refuses(ValueError, ["staleness_bound=-1 is out of range", "[0, 1099511627776]"],
                     *d, mode="ssp", staleness_bound=-1)
        self.refuses(ValueError, ["staleness_bound has no effect with mode='async'",
                                  "mode='ssp'"], *d, staleness_bound=2)
        self.refuses(ValueError, ["backup_workers=2 is out of range", "[0, 1]"], *d,
                     mode="backup", backup_workers=2)
        self.refuses(ValueError, ["backup_workers has no effect with mode='sync'"], *d,
                     mode="sync", backup_workers=1)
        self.refuses(ValueError, ["average_every=0 is out of range", "[1, 1099511627776]"],
                     *d, mode="local_sgd", average_every=0)
        self.refuses(ValueError, ["average_every has no effect with mode='ssp'"], *d,
                     mode="ssp", average_every=2)
        self.refuses(ValueError, ["seed=-1 is out of range"], *d, seed=-1)
        self.refuses(ValueError, ["eval_every='3 fortnights' is not a period"], *d,
                     eval_every="3 fortnights")
        self.refuses(ValueError, ["resume needs checkpoint_dir"], *d, resume=True)
        self.refuses(ValueError, ["batch_size=512", "200"], *d, mode="sync", batch_size=512)
        self.refuses(ValueError, ["train_examples=500 is larger than the training set"], *d,
                     train_examples=500)
        self.refuses(ValueError, ["devices=tpu: unknown device"], *d, devices="tpu")
        self.refuses(ValueError, ["give either arrays", "or dataset"], *d,
                     dataset="fashion_mnist")

    def test_outer_optimizer_errors_name_the_keyword(self):
        d = (self.x, self.y)
        for keywords, exception, message in (
                ({"mode": "local_sgd", "outer_lr": 3}, ValueError,
                 "outer_lr=3 is out of range; it must be in (0, 2]"),
                ({"mode": "local_sgd", "outer_momentum": 1}, ValueError,
                 "outer_momentum=1 is out of range; it must be in [0, 1)"),
                ({"mode": "local_sgd", "outer_nesterov": True}, ValueError,
                 "outer_nesterov needs outer_momentum > 0 (Nesterov's look-ahead is along the "
                 "momentum)"),
                ({"mode": "local_sgd", "fragments": 9}, ValueError,
                 "fragments=9 is out of range; it must be in [1, 8] (at most 1024, at most the "
                 "averaging period H = 8 so that each fragment is exchanged at its own step of "
                 "it)"),
                ({"mode": "local_sgd", "overlap_steps": -1}, ValueError,
                 "overlap_steps=-1 is out of range; it must be in [0, 7] (shorter than the "
                 "averaging period H = 8, so a fragment's exchange is merged before its next "
                 "one)"),
                ({"mode": "sync", "mix_alpha": 0.5}, ValueError,
                 "mix_alpha has no effect with mode='sync'; it is for mode='local_sgd'"),
                ({"mode": "async", "outer_lr": 0.7}, ValueError,
                 "outer_lr has no effect with mode='async'; it is for mode='local_sgd' or "
                 "mode='async_local_sgd'"),
                ({"mode": "sync", "outer_nesterov": False}, ValueError,
                 "outer_nesterov has no effect with mode='sync'; it is for mode='local_sgd' or "
                 "mode='async_local_sgd'"),
                ({"mode": "async_local_sgd", "delayed_nesterov": 0}, ValueError,
                 "delayed_nesterov=0 is out of range; it must be in [1, 1048576]"),
                ({"mode": "async_local_sgd", "delayed_nesterov": 2}, ValueError,
                 "delayed_nesterov=2 needs an outer momentum (it delays the outer momentum's "
                 "updates); give outer_momentum, e.g. 0.9 with Nesterov"),
                ({"mode": "local_sgd", "delayed_nesterov": 2, "outer_momentum": 0.9}, ValueError,
                 "delayed_nesterov has no effect with mode='local_sgd'; it is for "
                 "mode='async_local_sgd'"),
                ({"mode": "sync", "dynamic_local_updates": True}, ValueError,
                 "dynamic_local_updates has no effect with mode='sync'; it is for "
                 "mode='async_local_sgd'"),
                ({"mode": "async_local_sgd", "dynamic_local_updates": 1}, TypeError,
                 "dynamic_local_updates must be True or False, got 1"),
                ({"mode": "async_local_sgd", "delayed_nesterov": 2.0}, TypeError,
                 "delayed_nesterov must be an int, got float"),
                ({"mode": "local_sgd", "outer_nesterov": 1}, TypeError,
                 "outer_nesterov must be True or False, got 1"),
                ({"mode": "local_sgd", "outer_lr": "0.7"}, TypeError,
                 "outer_lr must be a number, got str")):
            with self.subTest(**{k: repr(v) for k, v in keywords.items()}):
                self.assertEqual(self.refuses(exception, [], *d, **keywords), message)

    def test_async_delay_rule_errors_name_the_keyword(self):
        d = (self.x, self.y)
        for keywords, exception, message in (
                ({"max_delay": -1}, ValueError,
                 "max_delay=-1 is out of range; it must be in [0, 1099511627776]"),
                ({"mode": "sync", "max_delay": 4}, ValueError,
                 "max_delay has no effect in sync mode (its update policy does not read it); it "
                 "is for async mode only"),
                ({"mode": "ssp", "delay_adaptive_lr": True}, ValueError,
                 "delay_adaptive_lr=True has no effect in ssp mode (its update policy does not "
                 "read it); it is for async mode only"),
                ({"workers": 1, "max_delay": 4}, ValueError,
                 "max_delay has no effect with one worker (its updates have staleness 0); it "
                 "needs 2 or more workers"),
                ({"delay_adaptive_lr": True, "staleness_aware_lr": True}, ValueError,
                 "delay_adaptive_lr and staleness_aware_lr are two rules for the same learning "
                 "rate; choose one"),
                ({"delay_adaptive_lr": 1}, TypeError,
                 "delay_adaptive_lr must be True or False, got 1"),
                ({"max_delay": "4"}, TypeError, "max_delay must be an int, got str")):
            with self.subTest(**{k: repr(v) for k, v in keywords.items()}):
                self.assertEqual(self.refuses(exception, [], *d, **keywords), message)

    def test_a_checkpoint_of_another_outer_optimizer_names_the_keyword(self):
        diloco = {"outer_lr": 0.7, "outer_momentum": 0.9, "outer_nesterov": True}
        with tempfile.TemporaryDirectory() as tmp:
            hogwild.train(self.x, self.y, mode="local_sgd", epochs=1, workers=2, hidden=[8],
                          checkpoint_dir=tmp, **diloco)
            message = self.refuses(ValueError, [], self.x, self.y, mode="local_sgd", epochs=2,
                                   checkpoint_dir=tmp, resume=True, **{**diloco, "outer_lr": 0.5})
        self.assertEqual(message, f"{tmp}/checkpoint.hwckpt: cannot resume: outer_lr differs: the "
                         "checkpoint has 0.7, this run 0.5; the checkpoint's state was built "
                         "with its value; resume with outer_lr=0.7 or use another "
                         "checkpoint_dir")

    def test_a_previous_log_is_not_replaced(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "log.csv")
            with open(path, "w") as f:
                f.write("an earlier run\n")
            self.refuses(ValueError, [f"log={path}", "overwrite_log"], self.x, self.y, log=path)
            with open(path) as f:
                self.assertEqual(f.read(), "an earlier run\n")

    def test_other_failures_are_runtime_errors(self):
        self.refuses(ValueError, ["dataset=nope is unknown"], dataset="nope")
        with tempfile.TemporaryDirectory() as empty:
            self.refuses(RuntimeError, [f"{empty}/train-images-idx3-ubyte", "missing"],
                         dataset="fashion_mnist", data_dir=empty)
        # Far more memory than any machine has: refused before anything is allocated.
        self.refuses(RuntimeError, ["memory"], self.x, self.y, hidden=[65536] * 6)

    def test_log_every_is_read_with_a_row_callback(self):
        rows = []
        hogwild.train(self.x, self.y, epochs=1, workers=1, hidden=[8], batch_size=10,
                      eval_every=0, log_every=5, on_log_row=rows.append)
        # 200 examples in batches of 10: 20 steps, a train row every 5.
        self.assertEqual(sum(row["kind"] == "train" for row in rows), 4)

    def test_test_figures_are_none_without_a_test_set(self):
        alone = hogwild.train(self.x, self.y, epochs=1, workers=1, hidden=[8])
        self.assertIsNone(alone.final_test_accuracy)
        self.assertIsNone(alone.final_test_loss)
        self.assertIn("final_test_accuracy=None", repr(alone))
        tested = hogwild.train(self.x, self.y, self.x, self.y, epochs=1, workers=1, hidden=[8])
        self.assertGreater(tested.final_test_accuracy, 0.0)
        self.assertGreater(tested.final_test_loss, 0.0)

    def test_still_usable_after_errors(self):
        self.test_bad_options_name_the_keyword()
        result = hogwild.train(self.x, self.y, epochs=1, workers=2, hidden=[8])
        self.assertEqual(result.examples, 200)


if __name__ == "__main__":
    testing.fail_if_hung()
    unittest.main()
