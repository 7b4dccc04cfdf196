"""hogwild.train_sparse() and hogwild.train_mf(): sparse logistic regression and SVM on CSR
arrays, and matrix factorization on rating arrays, from Python: they learn planted models, are
deterministic where the mode is, resume from a checkpoint bitwise, and refuse bad input with a
Python exception naming it."""

import os
import tempfile
import unittest

import numpy as np

import hogwild
import python_testing as testing


class Csr:
    """A minimal CSR matrix (what scipy.sparse.csr_matrix offers), so the test needs no SciPy."""

    def __init__(self, indptr, indices, data, shape):
        self.indptr, self.indices, self.data, self.shape = indptr, indices, data, shape


def planted(n=2000, dim=300, nnz=10, seed=0):
    """n rows of nnz distinct features each, labels the sign of a planted linear model."""
    rng = np.random.default_rng(seed)
    w = np.random.default_rng(99).standard_normal(dim)
    indices = np.concatenate([np.sort(rng.choice(dim, nnz, replace=False)) for _ in range(n)])
    data = rng.standard_normal(n * nnz).astype(np.float32)
    indptr = np.arange(0, n * nnz + 1, nnz)
    margins = (data * w[indices]).reshape(n, nnz).sum(axis=1)
    return Csr(indptr, indices, data, (n, dim)), np.where(margins > 0, 1.0, -1.0)


# The whole divergence error (trainer/finite_check.h), with the keywords' names.
DIVERGED = (r"^training diverged: (parameter \d+ is (nan|inf|-inf)|the (train|test) {loss} is "
            r"(nan|inf)) at global step \d+ \(learning rate {lr}\); lower lr \(or weight_decay\)$")


class TrainSparse(unittest.TestCase):

    def setUp(self):
        testing.fail_if_hung()
        self.x, self.y = planted()

    def test_learns_the_planted_model_in_every_mode(self):
        test_x, test_y = planted(n=500, seed=1)
        for model in ("logreg", "svm"):
            for mode in ("async", "sync", "locked", "round_robin", "buckwild"):
                with self.subTest(model=model, mode=mode):
                    r = hogwild.train_sparse(self.x, self.y, test_x, test_y, model=model,
                                             mode=mode, workers=2, epochs=3, lr=0.1,
                                             batch_size=4 if mode == "sync" else 1)
                    self.assertEqual(r.weights.dtype, np.float32)
                    self.assertEqual(r.weights.shape, (300,))
                    self.assertEqual([e["epoch"] for e in r.epochs], [1, 2, 3])
                    self.assertEqual(r.examples, 3 * 2000)
                    self.assertGreater(r.epochs[-1]["test_accuracy"], 0.85)
                    self.assertLess(r.epochs[-1]["train_loss"], r.epochs[0]["train_loss"] + 1e-9)
                    # The weights are the model the library evaluated: recompute the accuracy.
                    m = (self.x.data * r.weights[self.x.indices]).reshape(2000, 10).sum(axis=1)
                    self.assertAlmostEqual(float(np.mean(np.sign(m) == self.y)),
                                           r.epochs[-1]["train_accuracy"], delta=2e-3)

    def test_one_worker_and_sync_are_deterministic(self):
        for mode, workers in (("async", 1), ("sync", 2)):
            with self.subTest(mode=mode):
                a = hogwild.train_sparse(self.x, self.y, mode=mode, workers=workers, epochs=2)
                b = hogwild.train_sparse(self.x, self.y, mode=mode, workers=workers, epochs=2)
                np.testing.assert_array_equal(a.weights, b.weights)
                c = hogwild.train_sparse(self.x, self.y, mode=mode, workers=workers, epochs=2,
                                         seed=2)
                self.assertFalse(np.array_equal(a.weights, c.weights))

    def test_resume_from_a_checkpoint_is_bitwise_the_whole_run(self):
        whole = hogwild.train_sparse(self.x, self.y, mode="sync", workers=2, batch_size=8,
                                     epochs=4, lr_decay=0.8)
        with tempfile.TemporaryDirectory() as d:
            hogwild.train_sparse(self.x, self.y, mode="sync", workers=2, batch_size=8, epochs=2,
                                 lr_decay=0.8, checkpoint_dir=d)
            self.assertTrue(os.path.exists(os.path.join(d, "checkpoint.hwckpt")))
            with self.assertRaises(ValueError) as caught:
                hogwild.train_sparse(self.x, self.y, mode="sync", workers=2, batch_size=8,
                                     epochs=4, checkpoint_dir=d)
            self.assertIn("use resume to continue", str(caught.exception))
            rest = hogwild.train_sparse(self.x, self.y, mode="sync", workers=2, batch_size=8,
                                        epochs=4, lr_decay=0.8, checkpoint_dir=d, resume=True)
        self.assertEqual(rest.resumed_epochs, 2)
        self.assertEqual([e["epoch"] for e in rest.epochs], [3, 4])
        self.assertEqual(rest.updates, whole.updates)
        np.testing.assert_array_equal(rest.weights, whole.weights)

    def test_bad_input_is_an_exception_naming_it(self):
        with self.assertRaises(TypeError) as caught:
            hogwild.train_sparse(np.zeros((3, 3), np.float32), [1, 0, 1])
        self.assertIn("x must be a CSR matrix", str(caught.exception))
        bad = Csr(self.x.indptr, self.x.indices.copy(), self.x.data, (2000, 300))
        bad.indices[5] = 300
        with self.assertRaises(ValueError):
            hogwild.train_sparse(bad, self.y, epochs=1, workers=1)
        with self.assertRaises(ValueError) as caught:
            hogwild.train_sparse(self.x, self.y, lr=-1.0)
        self.assertIn("lr=-1", str(caught.exception))
        self.assertNotIn("--", str(caught.exception))
        for keywords, needle in (({"mode": "hogwild"}, 'unknown mode "hogwild"'),
                                 ({"model": "mf"}, "model=mf"),
                                 ({"workers": 0}, "workers=0"),
                                 ({"workers": 2**40}, "workers=1099511627776"),
                                 ({"seed": -1}, "seed=-1")):
            with self.subTest(**{k: str(v) for k, v in keywords.items()}):
                with self.assertRaises(ValueError) as caught:
                    hogwild.train_sparse(self.x, self.y, epochs=1, **keywords)
                self.assertIn(needle, str(caught.exception))
        with self.assertRaises(ValueError) as caught:
            hogwild.train_sparse(self.x, self.y[:10])
        self.assertIn("2000 rows", str(caught.exception))
        # The library checks the indices before it narrows them to int32: 2^32 + j is refused,
        # not trained as j.
        wide = Csr(self.x.indptr, self.x.indices.astype(np.int64), self.x.data, (2000, 300))
        before = wide.indices[4]
        wide.indices[5] += 2**32
        with self.assertRaises(ValueError) as caught:
            hogwild.train_sparse(wide, self.y, epochs=1, workers=1)
        self.assertIn(f"sparse data set: row 0: index {wide.indices[5]} after {before}; expected "
                      "strictly increasing indices in [0, 300)", str(caught.exception))
        # A float offset would be truncated (1.5 -> 1), a float index rounded: refused by type.
        for attr in ("indptr", "indices"):
            with self.subTest(attr=attr):
                arrays = {"indptr": self.x.indptr, "indices": self.x.indices}
                arrays[attr] = arrays[attr].astype(np.float64)
                with self.assertRaises(TypeError) as caught:
                    hogwild.train_sparse(Csr(arrays["indptr"], arrays["indices"], self.x.data,
                                             (2000, 300)), self.y, epochs=1, workers=1)
                self.assertEqual(str(caught.exception), f"x.{attr} must be integers, got float64")
        # Still usable afterwards.
        self.assertEqual(hogwild.train_sparse(self.x, self.y, epochs=1, workers=1).examples, 2000)

    def test_mode_options_reach_the_trainer(self):
        # local_sgd averaging after every local step is sync's step on the same global batch.
        sync = hogwild.train_sparse(self.x, self.y, mode="sync", workers=2, batch_size=8,
                                    epochs=2)
        local = hogwild.train_sparse(self.x, self.y, mode="local_sgd", workers=2, batch_size=8,
                                     epochs=2, average_every=1)
        np.testing.assert_allclose(local.weights, sync.weights, rtol=0, atol=1e-5)
        default = hogwild.train_sparse(self.x, self.y, mode="local_sgd", workers=2, batch_size=8,
                                       epochs=2)
        self.assertFalse(np.allclose(default.weights, sync.weights, rtol=0, atol=1e-5))
        # DiLoCo's outer step on the same replicas: another model, and still a falling loss.
        diloco = hogwild.train_sparse(self.x, self.y, mode="local_sgd", workers=2, batch_size=8,
                                      epochs=2, outer_lr=0.7, outer_momentum=0.9,
                                      outer_nesterov=True)
        self.assertTrue(np.isfinite(diloco.weights).all())
        self.assertFalse(np.allclose(diloco.weights, default.weights, rtol=0, atol=1e-5))
        self.assertLess(diloco.epochs[-1]["train_loss"], diloco.epochs[0]["train_loss"] + 1e-9)
        ssp = hogwild.train_sparse(self.x, self.y, mode="ssp", workers=2, epochs=2,
                                   staleness_bound=0)
        self.assertEqual(ssp.examples, 2 * 2000)
        self.assertIsNone(ssp.epochs[-1]["cyclades"])
        self.assertEqual(ssp.epochs[-1]["saturated_updates"], 0)
        # buckwild counts the coordinate updates its range clamped: none with room, some without.
        roomy = hogwild.train_sparse(self.x, self.y, mode="buckwild", workers=1, epochs=2)
        cramped = hogwild.train_sparse(self.x, self.y, mode="buckwild", workers=1, epochs=2,
                                       fixed_point_range=0.05)
        self.assertEqual(roomy.epochs[-1]["saturated_updates"], 0)
        self.assertGreater(cramped.epochs[-1]["saturated_updates"], 0)
        # cyclades reports its rounds' plans: 20 rounds of 100 per epoch, so far in the run.
        cyclades = hogwild.train_sparse(self.x, self.y, mode="cyclades", workers=2,
                                        batch_size=100, epochs=2)
        plans = cyclades.epochs[-1]["cyclades"]
        self.assertEqual((plans["rounds"], plans["examples"]), (40, 4000))
        self.assertGreaterEqual(2 * plans["busiest_worker"], plans["examples"])
        self.assertLessEqual(plans["largest_component"], plans["busiest_worker"])
        self.assertGreaterEqual(plans["components"], plans["rounds"])
        backup = hogwild.train_sparse(self.x, self.y, mode="backup", workers=2, batch_size=8,
                                      epochs=2, backup_workers=1)
        self.assertLess(backup.epochs[-1]["train_loss"], backup.epochs[0]["train_loss"] + 1e-9)
        for keywords, message in (
                ({"mode": "ssp", "staleness_bound": -1},
                 "staleness_bound=-1 is out of range [0, 1099511627776]"),
                ({"mode": "backup", "backup_workers": 2},
                 "backup_workers=2 is out of range [0, 1] (fewer than the workers)"),
                ({"mode": "local_sgd", "average_every": 0},
                 "average_every=0 is out of range [1, 1099511627776]"),
                ({"mode": "async", "staleness_bound": 2},
                 "staleness_bound has no effect with mode='async'; it is for mode='ssp'"),
                ({"mode": "local_sgd", "outer_lr": 3},
                 "outer_lr=3 is out of range; it must be in (0, 2]"),
                ({"mode": "local_sgd", "outer_nesterov": True},
                 "outer_nesterov needs outer_momentum > 0 (Nesterov's look-ahead is along the "
                 "momentum)"),
                ({"mode": "async", "outer_lr": 0.7},
                 "outer_lr has no effect with mode='async'; it is for mode='local_sgd' or "
                 "mode='async_local_sgd'"),
                ({"mode": "async_local_sgd", "delayed_nesterov": 0},
                 "delayed_nesterov=0 is out of range [1, 1048576]"),
                ({"mode": "async_local_sgd", "delayed_nesterov": 2},
                 "delayed_nesterov=2 needs an outer momentum (it delays the outer momentum's "
                 "updates); give outer_momentum, e.g. 0.9 with Nesterov"),
                ({"mode": "sync", "dynamic_local_updates": True},
                 "dynamic_local_updates has no effect with mode='sync'; it is for "
                 "mode='async_local_sgd'"),
                ({"mode": "async", "fixed_point_bits": 16},
                 "fixed_point_bits has no effect with mode='async'; it is for mode='buckwild'")):
            with self.subTest(**{k: str(v) for k, v in keywords.items()}):
                with self.assertRaises(ValueError) as caught:
                    hogwild.train_sparse(self.x, self.y, workers=2, batch_size=8, epochs=1,
                                         **keywords)
                self.assertEqual(str(caught.exception), message)

    def test_async_local_sgd_learns_the_planted_model(self):
        # Asynchronous local SGD (sync/async_local_sgd.h) with the delayed Nesterov outer step
        # and dynamic local updates: each worker walks its own half of every epoch (async's
        # split, batches per worker), and the model learns. One worker with the default outer
        # step (each push makes theta the replica) is async with one worker, bitwise.
        test_x, test_y = planted(n=500, seed=1)
        for dylu in (False, True):
            with self.subTest(dynamic_local_updates=dylu):
                r = hogwild.train_sparse(self.x, self.y, test_x, test_y, mode="async_local_sgd",
                                         workers=2, epochs=3, lr=0.1, average_every=4,
                                         outer_lr=0.7, outer_momentum=0.9, outer_nesterov=True,
                                         delayed_nesterov=2, dynamic_local_updates=dylu)
                self.assertEqual(r.examples, 3 * 2000)
                self.assertEqual(r.updates, 3 * 2000)
                self.assertTrue(np.isfinite(r.weights).all())
                self.assertGreater(r.epochs[-1]["test_accuracy"], 0.85)
        one = {"workers": 1, "epochs": 2, "lr": 0.1}
        local = hogwild.train_sparse(self.x, self.y, mode="async_local_sgd", average_every=4,
                                     **one)
        plain = hogwild.train_sparse(self.x, self.y, mode="async", **one)
        np.testing.assert_array_equal(local.weights, plain.weights)

    def test_divergence_is_an_error_not_a_result(self):
        with self.assertRaises(ValueError) as caught:
            hogwild.train_sparse(self.x, self.y, workers=1, epochs=2, lr=1e38)
        self.assertRegex(str(caught.exception), DIVERGED.format(lr=r"1e\+38", loss="loss"))

    def test_scipy_csr_matrix(self):
        try:
            import scipy.sparse
        except ImportError:
            self.skipTest("SciPy is not installed (python3-scipy; tools/setup.sh --bench)")
        x = scipy.sparse.csr_matrix((self.x.data, self.x.indices, self.x.indptr),
                                    shape=self.x.shape)
        a = hogwild.train_sparse(x, self.y, workers=1, epochs=1)
        b = hogwild.train_sparse(self.x, self.y, workers=1, epochs=1)
        np.testing.assert_array_equal(a.weights, b.weights)


class TrainMf(unittest.TestCase):

    def setUp(self):
        testing.fail_if_hung()
        # 60 users x 50 items of a planted rank-2 matrix, 40% observed, 10% of those held out.
        rng = np.random.default_rng(5)
        a, b = rng.standard_normal((60, 2)), rng.standard_normal((50, 2))
        u, i = np.nonzero(rng.random((60, 50)) < 0.4)
        r = 3 + (a[u] * b[i]).sum(axis=1)
        held = rng.random(u.size) < 0.1
        self.train = (u[~held], i[~held], r[~held])
        self.test = (u[held], i[held], r[held])

    def test_learns_the_planted_matrix_and_beats_the_global_mean(self):
        for mode in ("async", "locked", "async_local_sgd"):
            with self.subTest(mode=mode):
                result = hogwild.train_mf(*self.train, test=self.test, rank=4, mode=mode,
                                          workers=2, epochs=60, lr=0.05, weight_decay=0.01)
                self.assertEqual(result.user_factors.shape, (60, 4))
                self.assertEqual(result.item_factors.shape, (50, 4))
                self.assertEqual(len(result.epochs), 60)
                self.assertLess(result.epochs[-1]["test_rmse"],
                                0.8 * result.global_mean_test_rmse)
                # The factors are the model the library evaluated: recompute the training RMSE.
                u, i, r = self.train
                pred = result.mean + (result.user_factors[u] * result.item_factors[i]).sum(axis=1)
                self.assertAlmostEqual(float(np.sqrt(np.mean((pred - r) ** 2))),
                                       result.epochs[-1]["train_rmse"], places=4)

    def test_resume_is_bitwise_the_whole_run_with_one_worker(self):
        whole = hogwild.train_mf(*self.train, rank=3, workers=1, epochs=6)
        with tempfile.TemporaryDirectory() as d:
            hogwild.train_mf(*self.train, rank=3, workers=1, epochs=4, checkpoint_dir=d)
            rest = hogwild.train_mf(*self.train, rank=3, workers=1, epochs=6, checkpoint_dir=d,
                                    resume=True)
            with self.assertRaises(ValueError) as caught:
                hogwild.train_mf(*self.train, rank=5, workers=1, epochs=8, checkpoint_dir=d,
                                 resume=True)
            self.assertIn("rank=3", str(caught.exception))
        self.assertEqual(rest.resumed_epochs, 4)
        np.testing.assert_array_equal(rest.user_factors, whole.user_factors)
        np.testing.assert_array_equal(rest.item_factors, whole.item_factors)

    def test_batch_size_and_mode_options_reach_the_trainer(self):
        # local_sgd averaging after every local step is sync's step on the same global batch
        # (without weight decay, which the two modes apply to different coordinates).
        sync = hogwild.train_mf(*self.train, rank=3, mode="sync", workers=2, batch_size=8,
                                epochs=3, weight_decay=0.0)
        local = hogwild.train_mf(*self.train, rank=3, mode="local_sgd", workers=2, batch_size=8,
                                 epochs=3, weight_decay=0.0, average_every=1)
        np.testing.assert_allclose(local.user_factors, sync.user_factors, rtol=0, atol=1e-5)
        np.testing.assert_allclose(local.item_factors, sync.item_factors, rtol=0, atol=1e-5)
        # The batch size is read: batches of 2 ratings train another model than batches of 8.
        batch_2 = hogwild.train_mf(*self.train, rank=3, mode="sync", workers=2, batch_size=2,
                                   epochs=3, weight_decay=0.0)
        self.assertFalse(np.allclose(batch_2.user_factors, sync.user_factors, rtol=0, atol=1e-5))
        ssp = hogwild.train_mf(*self.train, rank=3, mode="ssp", workers=2, epochs=2,
                               staleness_bound=0)
        self.assertEqual(len(ssp.epochs), 2)
        # The outer optimizer is read: DiLoCo's outer step trains another model than averaging.
        diloco = hogwild.train_mf(*self.train, rank=3, mode="local_sgd", workers=2, batch_size=8,
                                  epochs=3, weight_decay=0.0, average_every=4, outer_lr=0.7,
                                  outer_momentum=0.9, outer_nesterov=True)
        averaged = hogwild.train_mf(*self.train, rank=3, mode="local_sgd", workers=2,
                                    batch_size=8, epochs=3, weight_decay=0.0, average_every=4)
        self.assertTrue(np.isfinite(diloco.user_factors).all())
        self.assertFalse(np.allclose(diloco.user_factors, averaged.user_factors, rtol=0,
                                     atol=1e-5))
        for keywords, message in (
                ({"batch_size": 0}, "batch_size=0"),
                ({"mode": "backup", "backup_workers": 2},
                 "backup_workers=2 is out of range [0, 1] (fewer than the workers)"),
                ({"mode": "sync", "average_every": 2},
                 "average_every has no effect with mode='sync'; it is for mode='local_sgd'"),
                ({"mode": "local_sgd", "outer_momentum": -0.5},
                 "outer_momentum=-0.5 is out of range; it must be in [0, 1)"),
                ({"mode": "async", "dynamic_local_updates": True},
                 "dynamic_local_updates has no effect with mode='async'; it is for "
                 "mode='async_local_sgd'"),
                ({"mode": "async_local_sgd", "delayed_nesterov": 4},
                 "delayed_nesterov=4 needs an outer momentum (it delays")):
            with self.subTest(**{k: str(v) for k, v in keywords.items()}):
                with self.assertRaises(ValueError) as caught:
                    hogwild.train_mf(*self.train, workers=2, epochs=1, **keywords)
                self.assertIn(message, str(caught.exception))

    def test_divergence_is_an_error_not_a_result(self):
        with self.assertRaises(ValueError) as caught:
            hogwild.train_mf(*self.train, test=self.test, workers=1, epochs=3, lr=1.0)
        self.assertRegex(str(caught.exception), DIVERGED.format(lr="1", loss="RMSE"))

    def test_bad_input(self):
        u, i, r = self.train
        with self.assertRaises(TypeError):
            hogwild.train_mf(u.astype(np.float64), i, r)
        with self.assertRaises(ValueError) as caught:
            hogwild.train_mf(u - 1, i, r)
        self.assertIn("users must be in", str(caught.exception))
        with self.assertRaises(ValueError):
            hogwild.train_mf(u, i[:-1], r)
        # Ratings that are not finite are refused, as the CSV reader refuses them.
        for bad in (np.nan, np.inf, -np.inf):
            with self.subTest(rating=bad):
                r2 = r.astype(np.float32)
                r2[3] = bad
                with self.assertRaises(ValueError) as caught:
                    hogwild.train_mf(u, i, r2, epochs=1, workers=1)
                self.assertEqual(str(caught.exception),
                                 f"training ratings: rating 3 (user {u[3]}, item {i[3]}) is "
                                 f"{'nan' if np.isnan(bad) else ('inf' if bad > 0 else '-inf')}; "
                                 "every rating must be a finite number")
                with self.assertRaises(ValueError) as caught:
                    hogwild.train_mf(u, i, r, test=(u, i, r2), epochs=1, workers=1)
                self.assertIn("test ratings: rating 3", str(caught.exception))
        for keywords, needle in (({"mode": "hogwild"},
                                  'unknown mode "hogwild"; the modes are async, sync, ssp, '
                                  "backup, local_sgd, locked, round_robin, async_local_sgd, cyclades and buckwild"),
                                 ({"rank": 0}, "rank=0"), ({"lr": 0.0}, "lr=0")):
            with self.subTest(**{k: str(v) for k, v in keywords.items()}):
                with self.assertRaises(ValueError) as caught:
                    hogwild.train_mf(u, i, r, epochs=1, **keywords)
                self.assertIn(needle, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
