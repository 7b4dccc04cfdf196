"""hogwild: data-parallel SGD: async (Hogwild!), sync (tower averaging) and the policies between
(ssp, backup, local_sgd, locked, round_robin, async_local_sgd).

    import hogwild
    result = hogwild.train(x, y, test_x, test_y, mode="sync", epochs=3)
    print(result.final_test_accuracy, result.examples_per_s)

train() runs the C++ trainer (the library behind `bazel run //trainer:train`) in this process,
with the GIL released while it trains; Ctrl-C stops it cleanly. Its keyword arguments are the
command line's flags, with the same defaults (docs/options.md).
"""

import os as _os
import pkgutil as _pkgutil
import re as _re

# The extension may sit in another `hogwild` folder on sys.path than this file: Bazel builds it
# into bazel-bin/python/hogwild (README, "Python": PYTHONPATH=bazel-bin/python:python).
__path__ = _pkgutil.extend_path(__path__, __name__)

from hogwild._hogwild import (  # noqa: E402
    _mode_option_defaults, _train, _train_mf, _train_sparse)

# The mode options (staleness_bound, backup_workers, average_every, the outer optimizer's
# outer_lr, outer_momentum and outer_nesterov, Streaming DiLoCo's fragments, overlap_steps and
# mix_alpha, async_local_sgd's delayed_nesterov and dynamic_local_updates) when not given: the
# library's ModeOptions (sync/mode_options.h), the defaults of every command's flags too.
_MODE_OPTION_DEFAULTS = _mode_option_defaults()

__all__ = ["MfResult", "SparseTrainResult", "TrainResult", "train", "train_mf", "train_sparse"]


class TrainResult:
    """What a finished run returns.

    Attributes:
      mode: "async", "sync", "ssp", "backup", "local_sgd", "locked", "round_robin" or
        "async_local_sgd".
      workers: the number of workers that trained.
      wall_time_s: seconds from the first step to the last (without loading or the final
        evaluation).
      examples: training examples processed, all workers together.
      steps: global steps (updates applied to the shared parameters).
      examples_per_s: examples / wall_time_s.
      final_test_accuracy: fraction in [0, 1] on the test set (None without a test set: not
        measured).
      final_test_loss: mean cross-entropy on the test set (None without a test set).
      staleness_mean, staleness_max: staleness of the updates (0 in sync mode); of the
        applied ones where some were dropped.
      dropped: gradients computed but not applied: backup's late ones, async's too stale ones
        (max_delay); their examples count in examples.
      staleness_histogram: uint64 [65]; bucket s counts updates of staleness s, the last one
        those of staleness >= 64.
      params: float32 [P], the trained parameters, all layers in order (docs/workloads.md,
        "Models").
      ema_params, final_ema_test_accuracy, final_ema_test_loss: with ema_decay, the moving
        average of the weights and its test accuracy and loss (empty and 0 without; the two
        figures None without a test set).
      stopped_early: True when a stop was requested and honoured.
      resumed_from_step: the checkpoint's global step, or -1 (not resumed).
      last_checkpoint_step: global step of the last checkpoint written, or -1.
    """

    __slots__ = ("mode", "workers", "wall_time_s", "examples", "steps", "examples_per_s",
                 "final_test_loss", "final_test_accuracy", "staleness_mean", "staleness_max",
                 "dropped", "staleness_histogram", "params", "stopped_early", "resumed_from_step",
                 "last_checkpoint_step", "ema_params", "final_ema_test_accuracy",
                 "final_ema_test_loss")

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        def figure(value):
            return "None" if value is None else f"{value:.4f}"
        return (f"TrainResult(mode={self.mode!r}, workers={self.workers}, "
                f"final_test_accuracy={figure(self.final_test_accuracy)}, "
                f"final_test_loss={figure(self.final_test_loss)}, steps={self.steps}, "
                f"examples={self.examples}, examples_per_s={self.examples_per_s:.0f}, "
                f"wall_time_s={self.wall_time_s:.2f}, staleness_mean={self.staleness_mean:.2f}, "
                f"staleness_max={self.staleness_max}, params=<{self.params.size} float32>)")


def _int(name, value):
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = value.__index__()
    if not -2**63 <= value < 2**63:
        raise ValueError(f"{name}={value} is out of range")
    return value


def _float(name, value):
    if isinstance(value, (bool, str)) or not hasattr(value, "__float__"):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def _bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def _str(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _path(name, value):
    """A str or os.PathLike as a str; None as "" (none)."""
    if value is None:
        return ""
    return _str(name, _os.fspath(value) if hasattr(value, "__fspath__") else value)


# The modes with local rounds (core/mode.h HasLocalRounds): both read average_every and the
# outer optimizer.
_LOCAL_ROUNDS = ("local_sgd", "async_local_sgd")


def _mode_options(mode, staleness_bound, backup_workers, average_every, outer_lr,
                  outer_momentum, outer_nesterov, fragments=None, overlap_steps=None,
                  mix_alpha=None, delayed_nesterov=None, dynamic_local_updates=None,
                  fixed_point_bits=None, fixed_point_range=None):
    """The mode options of train(), train_sparse() and train_mf(), None meaning the default; as
    on the command line, one given for a mode that does not read it is refused by name. Their
    ranges are the library's (its errors name the keywords)."""
    options = {}
    for name, value, readers, kind in (
            ("staleness_bound", staleness_bound, ("ssp",), _int),
            ("backup_workers", backup_workers, ("backup",), _int),
            ("average_every", average_every, _LOCAL_ROUNDS, _int),
            ("outer_lr", outer_lr, _LOCAL_ROUNDS, _float),
            ("outer_momentum", outer_momentum, _LOCAL_ROUNDS, _float),
            ("outer_nesterov", outer_nesterov, _LOCAL_ROUNDS, _bool),
            ("fragments", fragments, ("local_sgd",), _int),
            ("overlap_steps", overlap_steps, ("local_sgd",), _int),
            ("mix_alpha", mix_alpha, ("local_sgd",), _float),
            ("delayed_nesterov", delayed_nesterov, ("async_local_sgd",), _int),
            ("dynamic_local_updates", dynamic_local_updates, ("async_local_sgd",), _bool),
            ("fixed_point_bits", fixed_point_bits, ("buckwild",), _int),
            ("fixed_point_range", fixed_point_range, ("buckwild",), _float)):
        if value is not None and mode not in readers:
            raise ValueError(f"{name} has no effect with mode={mode!r}; it is for "
                             + " or ".join(f"mode={reader!r}" for reader in readers))
        options[name] = kind(name, _MODE_OPTION_DEFAULTS[name] if value is None else value)
    return options


def _period(name, value, units):
    """An eval_every / checkpoint_every value as (steps, amount in `units`)."""
    if isinstance(value, str):
        match = _re.fullmatch(r"\s*(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([a-z]*)\s*", value)
        number, unit = (match.group(1), match.group(2)) if match else (None, None)
        if unit in ("", "step", "steps") and number is not None and _re.fullmatch(r"\d+", number):
            return int(number), 0.0
        if match and unit in units:
            return 0, float(number) * units[unit]
        raise ValueError(f"{name}={value!r} is not a period; use N (global steps), "
                         + ", ".join(f"'N{u}'" for u in units) + " or 0")
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int (global steps) or a str such as "
                        f"'2{next(iter(units))}', got {type(value).__name__}")
    return _int(name, value), 0.0


def train(x=None, y=None, test_x=None, test_y=None, *,
          dataset=None, data_dir=None, train_examples=0, num_classes=None,
          mode="async", model="mlp", hidden=None, workers=None, devices=None,
          workers_per_device=None, batch_size=64, epochs=8, drop_last=False, lr=0.05,
          lr_schedule="constant",
          lr_decay_rate=None, lr_decay_steps=None, lr_warmup_steps=0, lr_scaling="none",
          lr_reference_batch=None, optimizer="sgd", optimizer_state=None,
          momentum=None, adam_beta1=None, adam_beta2=None, rmsprop_alpha=None, eps=None,
          clip_global_norm=0.0, bn_momentum=None,
          weight_decay=0.0, weight_decay_biases=None, ema_decay=0.0, ema_num_updates=None,
          staleness_aware_lr=False, delay_adaptive_lr=False, max_delay=0,
          staleness_bound=None, backup_workers=None,
          average_every=None, outer_lr=None, outer_momentum=None, outer_nesterov=None,
          fragments=None, overlap_steps=None, mix_alpha=None, delayed_nesterov=None,
          dynamic_local_updates=None, seed=1,
          eval_every="1epoch", log=None, overwrite_log=False,
          log_every=None, checkpoint_dir=None, checkpoint_every=None, resume=False,
          overwrite_checkpoint=False, prefetch=4, on_log_row=None):
    """Trains a classifier with data-parallel SGD and returns a TrainResult.

    Data: either arrays or a dataset name.
      x: float32 [N, C, H, W] (images) or [N, D], C-contiguous, finite, already normalized as
        you want it (train() does not rescale arrays). Copied once into the trainer.
      y: integer labels [N] (any NumPy integer dtype) in [0, num_classes).
      test_x, test_y: the same for the test set (examples of x's shape), or None: no
        evaluation (final_test_* are None).
      dataset: "fashion_mnist", "mnist" or "cifar10" (the binary version's .bin files) instead
        of arrays: loaded from data_dir (default: where tools/setup.sh installs it), both splits standardized with the training set's
        mean and deviation, exactly as `//trainer:train` does.
      train_examples: train on the first N examples only (0: all).
      num_classes: default: the largest label of y and test_y + 1.

    Every other keyword is the `//trainer:train` flag of that name, with its default
    (docs/options.md): mode ("async", "sync", "ssp", "backup",
    "local_sgd", "locked": async with one lock over each step, "round_robin": the workers'
    updates applied in turn, or "async_local_sgd": local SGD whose workers push their rounds
    without waiting for each other, docs/modes.md; chosen per call; the build flag --//sync:mode of the command line),
    model ("logreg", "mlp", "cnn", "cnn_bn": cnn with batch norm), hidden (mlp only; default (256, 256)), workers (CPU worker
    threads; default one per hardware thread), devices ("cpu", "gpu", "gpu:0,1"; default every
    GPU if there is one, else "cpu"), workers_per_device (GPUs only; default 1), batch_size
    (per worker in async, ssp, locked, round_robin and async_local_sgd modes, global in the
    others), epochs,
    drop_last (True: leave out each epoch's short last batch, per worker where the batch is),
    lr, lr_schedule ("constant",
    "exponential", "step"), lr_decay_rate (decaying schedules only, default 1.0),
    lr_decay_steps (decaying schedules only, default 1000), lr_warmup_steps (linear warm-up,
    with every schedule), lr_scaling ("none", "linear", "sqrt": scale lr by the global batch /
    lr_reference_batch), lr_reference_batch (default 256), optimizer ("sgd", "momentum",
    "nesterov", "adam", "adamw", "rmsprop", "adagrad"; torch.optim's rules and defaults),
    optimizer_state ("per_worker" or "shared": async, ssp, locked, round_robin only), momentum,
    adam_beta1, adam_beta2 (adam, adamw), rmsprop_alpha (rmsprop), eps (0: the optimizer's PyTorch
    default), clip_global_norm (0: off; sync and backup clip the averaged gradient, the other
    modes each worker's), bn_momentum (cnn_bn only: the moving statistics' momentum, PyTorch's
    convention), weight_decay, weight_decay_biases (False: biases exempt from it), ema_decay
    (0: none; async and sync), ema_num_updates,
    staleness_aware_lr (async only: lr / staleness), delay_adaptive_lr (async only, not with
    staleness_aware_lr: lr * min(1, workers / staleness)), max_delay (async only: drop an update
    staler than this many updates, 0: none; the result's dropped counts them), staleness_bound (ssp only, default 3), backup_workers
    (backup only, default 0), average_every (local_sgd and async_local_sgd only, default 8:
    local steps per round), outer_lr, outer_momentum, outer_nesterov (local_sgd and
    async_local_sgd only: the outer optimizer each averaging, or each async_local_sgd push,
    applies to the pseudo-gradient, SGD with outer_lr in (0, 2], momentum in [0, 1) and
    Nesterov's look-ahead, which needs outer_momentum; the default, outer_lr 1 without momentum,
    is plain averaging; DiLoCo is outer_lr=0.7, outer_momentum=0.9, outer_nesterov=True with
    optimizer="adamw"; sync/outer_optimizer.h), fragments, overlap_steps, mix_alpha (local_sgd
    only: Streaming DiLoCo, F fragments exchanged at staggered steps, each exchange overlapping
    overlap_steps steps and merged as mix_alpha * replica + (1 - mix_alpha) * exchanged; the
    defaults 1, 0, 0 exchange everything at once; sync/streaming.h),
    delayed_nesterov (async_local_sgd only, default 1: pushes per update of the outer momentum,
    Liu et al. 2024's delayed Nesterov; > 1 needs outer_momentum), dynamic_local_updates
    (async_local_sgd only, default False: each worker's round is average_every x the fastest
    worker's time per step / its own, at least 1 step; sync/async_local_sgd.h), seed (in [0, 2^64 - 1]), eval_every (global
    steps as an int, or "N", "Nepoch(s)", 0: only at the end), log (a CSV or .jsonl
    convergence-log path), overwrite_log, log_every (a log row per worker every N of its steps,
    default 100; with log or on_log_row only), checkpoint_dir,
    checkpoint_every (with checkpoint_dir: N global steps, "30s", "10m", "1h", 0; default
    "600s"), resume, overwrite_checkpoint, prefetch (batches queued per worker). A keyword that
    these settings would not read (hidden with model="cnn", lr_decay_rate with the constant
    schedule, workers with GPUs, staleness_bound outside mode="ssp", adam_beta1 with
    optimizer="sgd", ema_num_updates without ema_decay) is refused, even typed at its default
    value, never silently dropped. The command's --exchange_every is not a keyword: it is read
    only by a job of several processes (mpirun), and this module trains in the calling process
    alone (it is not an MPI program); use the train binary under mpirun for that.

    on_log_row: called with every convergence-log row as a dict (docs/convergence_log.md:
      wall_time_s, kind "train"/"eval", epoch, step, examples_seen, worker, train_loss,
      test_loss and test_accuracy (None on train rows), staleness_mean, staleness_max, lr,
      delay_s, remote_staleness_mean and remote_staleness_max (None: runs across processes
      only), ema_test_accuracy (eval rows with ema_decay, else None), eval_seconds,
      exchanges, bytes_per_worker, outer_step_norm (None outside local_sgd and
      async_local_sgd and before their first outer step), dropped),
      in order (step never decreases), one call at a time, from the trainer's threads with
      the GIL held. Keep it short: workers wait while it runs. An exception it raises stops
      training and is raised again by train().

    Raises:
      TypeError: an argument of the wrong type, features that are not float32, labels that
        are not integers.
      ValueError: an option out of range or without effect; arrays of the wrong shape,
        non-contiguous, non-finite, with labels out of range or counts that differ.
      RuntimeError: any other failure of the trainer (a missing dataset, a run that does not
        fit in memory, a worker's error), with the trainer's message.
      KeyboardInterrupt: Ctrl-C (SIGINT) during training, after every worker has finished its
        current step (and a checkpoint was written, with checkpoint_dir).
    """
    if dataset is not None:
        if x is not None or y is not None or test_x is not None or test_y is not None:
            raise ValueError("give either arrays (x, y, test_x, test_y) or dataset, not both")
        if num_classes is not None:
            raise ValueError(f"num_classes has no effect with dataset={dataset!r} (it has 10)")
        dataset = _str("dataset", dataset)
    else:
        if x is None or y is None:
            raise ValueError("give the training data: x and y (arrays), or dataset "
                             "('fashion_mnist' or 'mnist')")
        if data_dir is not None:
            raise ValueError("data_dir has no effect with arrays (it is where a named "
                             "dataset is read from)")
        if (test_x is None) != (test_y is None):
            raise ValueError("give both test_x and test_y, or neither")
        if num_classes is not None and _int("num_classes", num_classes) < 1:
            raise ValueError(f"num_classes={num_classes} is out of range; it must be >= 1")

    model = _str("model", model)
    lr_schedule = _str("lr_schedule", lr_schedule)
    decays = lr_schedule != "constant"
    # As the command line: a keyword that these settings do not read is refused by name.
    if hidden is not None and model != "mlp":
        raise ValueError(f"hidden has no effect with model={model!r} (only mlp has hidden "
                         "layers)")
    for name, value in (("lr_decay_rate", lr_decay_rate), ("lr_decay_steps", lr_decay_steps)):
        if value is not None and not decays:
            raise ValueError(f"{name} has no effect with lr_schedule='constant'")
    mode = _str("mode", mode)
    mode_options = _mode_options(mode, staleness_bound, backup_workers, average_every, outer_lr,
                                 outer_momentum, outer_nesterov, fragments, overlap_steps,
                                 mix_alpha, delayed_nesterov, dynamic_local_updates)
    if checkpoint_dir is None and (checkpoint_every is not None or resume):
        raise ValueError(("checkpoint_every" if checkpoint_every is not None else "resume")
                         + " needs checkpoint_dir (the directory where checkpoints live)")
    if on_log_row is not None and not callable(on_log_row):
        raise TypeError(f"on_log_row must be callable, got {type(on_log_row).__name__}")
    if hidden is None:
        hidden = (256, 256) if model == "mlp" else ()
    if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__iter__"):
        raise TypeError(f"hidden must be a sequence of ints, got {type(hidden).__name__}")
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    seed = seed.__index__()
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed={seed} is out of range; it must be in [0, 2^64 - 1]")
    if _int("train_examples", train_examples) < 0:
        raise ValueError(f"train_examples={train_examples} is out of range; it must be >= 0 "
                         "(0: all)")
    eval_steps, eval_epochs = _period("eval_every", eval_every, {"epoch": 1.0, "epochs": 1.0})
    ckpt_steps, ckpt_seconds = _period(
        "checkpoint_every", "600s" if checkpoint_every is None else checkpoint_every,
        {"s": 1.0, "m": 60.0, "h": 3600.0})
    if checkpoint_dir is None:
        ckpt_steps, ckpt_seconds = 0, 0.0

    # The keywords only some settings read: typed ones are refused where nothing reads them
    # (the trainer's UnreadSettings, as the command line does), the others take their defaults.
    typed = {name: repr(value) for name, value in (
        ("lr_reference_batch", lr_reference_batch), ("optimizer_state", optimizer_state),
        ("momentum", momentum), ("adam_beta1", adam_beta1), ("adam_beta2", adam_beta2),
        ("rmsprop_alpha", rmsprop_alpha), ("eps", eps), ("bn_momentum", bn_momentum),
        ("weight_decay_biases", weight_decay_biases), ("ema_num_updates", ema_num_updates),
        ("log_every", log_every))
        if value is not None}
    log_every = 100 if log_every is None else log_every
    lr_reference_batch = 256 if lr_reference_batch is None else lr_reference_batch
    optimizer_state = "per_worker" if optimizer_state is None else optimizer_state
    momentum = 0.0 if momentum is None else momentum
    adam_beta1 = 0.9 if adam_beta1 is None else adam_beta1
    adam_beta2 = 0.999 if adam_beta2 is None else adam_beta2
    rmsprop_alpha = 0.99 if rmsprop_alpha is None else rmsprop_alpha
    eps = 0.0 if eps is None else eps
    bn_momentum = 0.1 if bn_momentum is None else bn_momentum
    weight_decay_biases = True if weight_decay_biases is None else weight_decay_biases
    ema_num_updates = True if ema_num_updates is None else ema_num_updates

    options = {
        "typed": typed,
        "mode": mode,
        "devices": "" if devices is None else _str("devices", devices),
        "workers": None if workers is None else _int("workers", workers),
        "workers_per_device": (None if workers_per_device is None
                               else _int("workers_per_device", workers_per_device)),
        "model": model,
        "hidden": [_int("hidden", h) for h in hidden],
        "batch_size": _int("batch_size", batch_size),
        "epochs": _int("epochs", epochs),
        "drop_last": _bool("drop_last", drop_last),
        "lr": _float("lr", lr),
        "lr_schedule": lr_schedule,
        "lr_decay_rate": _float("lr_decay_rate", 1.0 if lr_decay_rate is None else lr_decay_rate)
                         if decays else 1.0,
        "lr_decay_steps": _int("lr_decay_steps", 1000 if lr_decay_steps is None
                               else lr_decay_steps) if decays else 1,
        "lr_warmup_steps": _int("lr_warmup_steps", lr_warmup_steps),
        "lr_scaling": _str("lr_scaling", lr_scaling),
        "lr_reference_batch": _int("lr_reference_batch", lr_reference_batch),
        "optimizer": _str("optimizer", optimizer),
        "optimizer_state": _str("optimizer_state", optimizer_state),
        "momentum": _float("momentum", momentum),
        "adam_beta1": _float("adam_beta1", adam_beta1),
        "adam_beta2": _float("adam_beta2", adam_beta2),
        "rmsprop_alpha": _float("rmsprop_alpha", rmsprop_alpha),
        "eps": _float("eps", eps),
        "clip_global_norm": _float("clip_global_norm", clip_global_norm),
        "bn_momentum": _float("bn_momentum", bn_momentum),
        "weight_decay": _float("weight_decay", weight_decay),
        "weight_decay_biases": _bool("weight_decay_biases", weight_decay_biases),
        "ema_decay": _float("ema_decay", ema_decay),
        "ema_num_updates": _bool("ema_num_updates", ema_num_updates),
        "staleness_aware_lr": _bool("staleness_aware_lr", staleness_aware_lr),
        "delay_adaptive_lr": _bool("delay_adaptive_lr", delay_adaptive_lr),
        "max_delay": _int("max_delay", max_delay),
        **mode_options,
        "seed": seed,
        "eval_every_steps": eval_steps,
        "eval_every_epochs": eval_epochs,
        "log_every": _int("log_every", log_every),
        "log": _path("log", log),
        "overwrite_log": _bool("overwrite_log", overwrite_log),
        "prefetch": _int("prefetch", prefetch),
        "checkpoint_dir": _path("checkpoint_dir", checkpoint_dir),
        "checkpoint_every_steps": ckpt_steps,
        "checkpoint_every_seconds": ckpt_seconds,
        "resume": _bool("resume", resume),
        "overwrite_checkpoint": _bool("overwrite_checkpoint", overwrite_checkpoint),
    }
    fields = _train(x, y, test_x, test_y, dataset=dataset or "",
                    data_dir=_path("data_dir", data_dir),
                    train_examples=_int("train_examples", train_examples),
                    num_classes=0 if num_classes is None else num_classes, options=options,
                    on_log_row=on_log_row)
    return TrainResult(fields)


class SparseTrainResult:
    """What train_sparse() returns.

    Attributes:
      weights: float32 [D], the trained linear model (margin = x . weights).
      epochs: one dict per epoch this call trained (epoch, lr, train_time_s, examples, updates,
        train_loss, train_accuracy, test_loss, test_accuracy; the test ones None without a
        test set; cyclades, with mode="cyclades", a dict of its rounds' plans so far: rounds,
        examples, and the sums over the rounds of components, largest_component and
        busiest_worker (the most loaded worker's examples), else None; saturated_updates,
        buckwild's coordinate updates clamped at fixed_point_range so far); the losses are the whole
        set's mean log-loss (logreg) or hinge loss (svm).
      train_time_s: seconds of SGD (the workers' start to their join; evaluation excluded).
      examples, updates: all epochs', a resumed checkpoint's included.
      resumed_epochs: epochs done by the checkpoint this call resumed from, or 0.
    """

    __slots__ = ("weights", "epochs", "train_time_s", "examples", "updates", "resumed_epochs")

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        last = self.epochs[-1]
        return (f"SparseTrainResult(epochs={last['epoch']}, train_loss={last['train_loss']:.6f}, "
                f"train_accuracy={last['train_accuracy']:.4f}, updates={self.updates}, "
                f"train_time_s={self.train_time_s:.3f})")


def _csr(name, x, y, num_features):
    """(indptr int64, indices int64, values float32, labels float32, D) of a CSR matrix: any
    object with indptr, indices, data and shape (scipy.sparse.csr_matrix, or your own). The
    library checks the indices before it narrows them to int32."""
    for attr in ("indptr", "indices", "data", "shape"):
        if not hasattr(x, attr):
            raise TypeError(f"{name} must be a CSR matrix (indptr, indices, data, shape), "
                            f"e.g. scipy.sparse.csr_matrix; got {type(x).__name__}")
    import numpy as np
    for attr in ("indptr", "indices"):
        # A cast would truncate a float offset (1.5 -> 1) or wrap an index silently.
        kind = np.asarray(getattr(x, attr)).dtype
        if kind.kind not in "iu":
            raise TypeError(f"{name}.{attr} must be integers, got {kind}")
    labels = np.ascontiguousarray(y, dtype=np.float32)
    if labels.ndim != 1 or labels.shape[0] != x.shape[0]:
        raise ValueError(f"{name} has {x.shape[0]} rows but its labels have shape {labels.shape}")
    return (np.ascontiguousarray(x.indptr, dtype=np.int64),
            np.ascontiguousarray(x.indices, dtype=np.int64),
            np.ascontiguousarray(x.data, dtype=np.float32), labels,
            int(x.shape[1]) if num_features is None else num_features)


def train_sparse(x, y, test_x=None, test_y=None, *, model="logreg", mode="async", workers=None,
                 batch_size=1, epochs=5, lr=0.5, lr_decay=1.0, weight_decay=0.0, seed=1,
                 shuffle=True, staleness_bound=None, backup_workers=None, average_every=None,
                 outer_lr=None, outer_momentum=None, outer_nesterov=None, fragments=None,
                 overlap_steps=None, mix_alpha=None, delayed_nesterov=None,
                 dynamic_local_updates=None, fixed_point_bits=None, fixed_point_range=None,
                 checkpoint_dir=None, resume=False, overwrite_checkpoint=False):
    """Trains sparse logistic regression (model="logreg") or a linear SVM ("svm") with Hogwild!
    SGD, the library behind `bazel run //sparse:train` (docs/workloads.md, "Sparse workloads").

    x, test_x: CSR matrices [N, D] (scipy.sparse.csr_matrix or any object with indptr, indices,
      data and shape), column indices increasing within a row; y, test_y: [N] labels, > 0 the
      positive class, anything else the negative one.
    mode: "async" (Hogwild!), "sync", "ssp", "backup", "local_sgd", "locked", "round_robin",
      "async_local_sgd", "cyclades" (conflict-free rounds of batch_size updates, each round's
      conflict graph's components dealt to the workers; docs/modes.md) or "buckwild" (Hogwild!
      with the weights in fixed point, fixed_point_bits 8 or 16 (default 8) over the range
      fixed_point_range (default 8), stochastic rounding; batch_size 1); staleness_bound (ssp
      only, default 3), backup_workers (backup only,
      default 0), average_every (local_sgd and async_local_sgd only, default 8), outer_lr,
      outer_momentum, outer_nesterov (local_sgd and async_local_sgd only, default plain
      averaging; DiLoCo's outer step is outer_lr=0.7, outer_momentum=0.9, outer_nesterov=True),
      fragments, overlap_steps, mix_alpha (local_sgd only: Streaming DiLoCo; each epoch ends
      with every fragment exchanged), delayed_nesterov, dynamic_local_updates (async_local_sgd
      only; each epoch ends with every worker's last push): the modes' options, as train()'s;
      workers:
      threads (default: one per core); batch_size: examples per update (per worker; global in
      sync, backup and local_sgd; in cyclades the updates of a round, at least workers); lr: the first epoch's step, times lr_decay after each;
      weight_decay: L2 on the touched coordinates.
    checkpoint_dir, resume, overwrite_checkpoint: a checkpoint after every epoch, as the
      command's flags. The GIL is released while training; Ctrl-C stops the run after the
      current epoch (and its checkpoint) and raises KeyboardInterrupt.
    Errors: TypeError (x is not a CSR matrix), ValueError (bad data or options, a checkpoint
      that does not match), RuntimeError (the rest).
    """
    if _int("seed", seed) < 0:
        raise ValueError(f"seed={seed} is out of range [0, 2^63)")
    mode = _str("mode", mode)
    mode_options = _mode_options(mode, staleness_bound, backup_workers, average_every, outer_lr,
                                 outer_momentum, outer_nesterov, fragments, overlap_steps,
                                 mix_alpha, delayed_nesterov, dynamic_local_updates,
                                 fixed_point_bits, fixed_point_range)
    indptr, indices, values, labels, dim = _csr("x", x, y, None)
    test = None
    if test_x is not None:
        if tuple(test_x.shape)[1] > dim:
            raise ValueError(f"test_x has {test_x.shape[1]} columns, x {dim}; they must agree")
        test = _csr("test_x", test_x, test_y, dim)[:4]
    options = {
        "model": _str("model", model), "mode": mode, **mode_options,
        "workers": _int("workers", workers if workers is not None
                        else max(1, _os.cpu_count() or 1)),
        "batch_size": _int("batch_size", batch_size), "epochs": _int("epochs", epochs),
        "lr": _float("lr", lr), "lr_decay": _float("lr_decay", lr_decay),
        "weight_decay": _float("weight_decay", weight_decay), "seed": _int("seed", seed),
        "shuffle": _bool("shuffle", shuffle),
        "checkpoint_dir": _path("checkpoint_dir", checkpoint_dir),
        "resume": _bool("resume", resume),
        "overwrite_checkpoint": _bool("overwrite_checkpoint", overwrite_checkpoint),
    }
    try:
        fields = _train_sparse(indptr, indices, values, labels, dim, test, options)
    except ValueError as e:
        # The library speaks in the command's flags; here they are keywords.
        raise ValueError(_re.sub(r"--([a-z_]+)", r"\1", str(e))) from None
    return SparseTrainResult(fields)


class MfResult:
    """What train_mf() returns.

    Attributes:
      mean: the training ratings' mean (the model predicts mean + user_factors[u] . item_factors[i]).
      user_factors: float32 [U, rank]; item_factors: float32 [I, rank].
      epochs: one dict per epoch this call trained (epoch, lr, train_time_s, updates, train_rmse,
        test_rmse; test_rmse None without test ratings).
      train_time_s: seconds of SGD; updates: ratings processed, a resumed checkpoint's included.
      resumed_epochs: epochs done by the checkpoint this call resumed from, or 0.
      global_mean_test_rmse: the test RMSE of predicting `mean` everywhere (the baseline), or None.
    """

    __slots__ = ("mean", "user_factors", "item_factors", "epochs", "train_time_s", "updates",
                 "resumed_epochs", "global_mean_test_rmse")

    def __repr__(self):
        last = self.epochs[-1]
        return (f"MfResult(epochs={last['epoch']}, train_rmse={last['train_rmse']:.4f}, "
                f"test_rmse={last['test_rmse']}, updates={self.updates})")


def _ratings(name, users, items, ratings):
    import numpy as np
    arrays = [np.asarray(a) for a in (users, items, ratings)]
    if any(a.ndim != 1 for a in arrays) or len({a.shape[0] for a in arrays}) != 1:
        raise ValueError(f"{name}: users, items and ratings must be 1-D arrays of one length; "
                         f"got shapes {[a.shape for a in arrays]}")
    for label, a in zip(("users", "items"), arrays[:2]):
        if a.dtype.kind not in "iu":
            raise TypeError(f"{name}: {label} must be integers (indices from 0), got {a.dtype}")
        if a.size and (a.min() < 0 or a.max() >= 2**31 - 1):
            raise ValueError(f"{name}: {label} must be in [0, 2^31 - 1), got {a.min()} to "
                             f"{a.max()}")
    return (np.ascontiguousarray(arrays[0], dtype=np.int32),
            np.ascontiguousarray(arrays[1], dtype=np.int32),
            np.ascontiguousarray(arrays[2], dtype=np.float32))


def train_mf(users, items, ratings, test=None, *, rank=16, mode="async", workers=None,
             batch_size=1, epochs=20, lr=0.02, lr_decay=1.0, weight_decay=0.05, seed=1,
             shuffle=True, staleness_bound=None, backup_workers=None, average_every=None,
             outer_lr=None, outer_momentum=None, outer_nesterov=None, fragments=None,
             overlap_steps=None, mix_alpha=None, delayed_nesterov=None,
             dynamic_local_updates=None, checkpoint_dir=None, resume=False,
             overwrite_checkpoint=False):
    """Low-rank matrix factorization by per-rating Hogwild! SGD, the library behind
    `bazel run //sparse:train -- --model=mf` (docs/workloads.md, "Sparse workloads").

    users, items: integer arrays [R], indices from 0 (U = the largest user index + 1 of the
      training and test ratings, I likewise); ratings: [R] numbers. test: None or a tuple
      (users, items, ratings) of held-out ratings in the same index space.
    mode, staleness_bound, backup_workers, average_every, outer_lr, outer_momentum,
      outer_nesterov, fragments, overlap_steps, mix_alpha, delayed_nesterov,
      dynamic_local_updates: as train_sparse's; batch_size: ratings
      per update (per worker; global in sync, backup and local_sgd); the other keywords are the
      command's flags, with its defaults for mf. The GIL is released while training; Ctrl-C
      stops the run after the current epoch (and its checkpoint) and raises KeyboardInterrupt.
    Errors: TypeError (non-integer indices), ValueError (bad arrays or options, a checkpoint that
      does not match), RuntimeError (the rest).
    """
    if _int("seed", seed) < 0:
        raise ValueError(f"seed={seed} is out of range [0, 2^63)")
    mode = _str("mode", mode)
    mode_options = _mode_options(mode, staleness_bound, backup_workers, average_every, outer_lr,
                                 outer_momentum, outer_nesterov, fragments, overlap_steps,
                                 mix_alpha, delayed_nesterov, dynamic_local_updates)
    train = _ratings("ratings", users, items, ratings)
    held_out = None if test is None else _ratings("test", *test)
    sets = [train] + ([held_out] if held_out is not None else [])
    num_users = max(int(t[0].max()) + 1 if t[0].size else 0 for t in sets)
    num_items = max(int(t[1].max()) + 1 if t[1].size else 0 for t in sets)
    options = {
        "rank": _int("rank", rank), "mode": mode, **mode_options,
        "batch_size": _int("batch_size", batch_size),
        "workers": _int("workers", workers if workers is not None
                        else max(1, _os.cpu_count() or 1)),
        "epochs": _int("epochs", epochs), "lr": _float("lr", lr),
        "lr_decay": _float("lr_decay", lr_decay),
        "weight_decay": _float("weight_decay", weight_decay), "seed": _int("seed", seed),
        "shuffle": _bool("shuffle", shuffle),
        "checkpoint_dir": _path("checkpoint_dir", checkpoint_dir),
        "resume": _bool("resume", resume),
        "overwrite_checkpoint": _bool("overwrite_checkpoint", overwrite_checkpoint),
    }
    try:
        fields = _train_mf(*train, num_users, num_items, held_out, options)
    except ValueError as e:
        raise ValueError(_re.sub(r"--([a-z_]+)", r"\1", str(e))) from None
    result = MfResult()
    factors = fields.pop("factors").reshape(num_users + num_items, options["rank"])
    result.user_factors, result.item_factors = factors[:num_users], factors[num_users:]
    for name, value in fields.items():
        setattr(result, name, value)
    return result
