"""Ctrl-C stops hogwild.train() cleanly: SIGINT sent to the process while the workers train
(with the GIL released) raises KeyboardInterrupt from train() once every worker has finished
its step, the stop writes a checkpoint, and the process goes on training afterwards."""

import os
import signal
import tempfile
import threading
import time
import unittest

import hogwild
import python_testing as testing


class Interrupt(unittest.TestCase):

    def setUp(self):
        # A process started with SIGINT ignored (as some test runners do) would keep it so,
        # and Python would never raise KeyboardInterrupt: install Python's own handler.
        self.old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
        self.x, self.y = testing.synthetic(2000)

    def tearDown(self):
        signal.signal(signal.SIGINT, self.old_handler)

    def test_sigint_stops_training_and_raises_keyboard_interrupt(self):
        for mode in ("async", "sync"):
            with self.subTest(mode=mode), tempfile.TemporaryDirectory() as tmp:
                rows = []
                first_row = threading.Event()
                sent = []

                def on_row(row):
                    rows.append(row)
                    first_row.set()

                def interrupt():
                    first_row.wait(30)
                    sent.append(time.monotonic())
                    os.kill(os.getpid(), signal.SIGINT)

                thread = threading.Thread(target=interrupt)
                thread.start()
                try:
                    # 100,000 epochs would take hours: only the interrupt can end this.
                    with self.assertRaises(KeyboardInterrupt):
                        hogwild.train(self.x, self.y, mode=mode, hidden=[32], workers=2,
                                      epochs=100000, log_every=1, on_log_row=on_row,
                                      checkpoint_dir=tmp, checkpoint_every=0)
                    stopped = time.monotonic()
                finally:
                    thread.join()
                self.assertTrue(sent, "the first row never came")
                # Signals are looked at every 0.1 s, then the current step finishes.
                self.assertLess(stopped - sent[0], 5.0)
                # The stop is orderly: a checkpoint of the last step was written.
                self.assertTrue(os.path.exists(os.path.join(tmp, "checkpoint.hwckpt")),
                                os.listdir(tmp))
                # Rows that arrived are whole and in order; none after train() returned.
                count = len(rows)
                time.sleep(0.3)
                self.assertEqual(len(rows), count, "rows arrived after train() returned")

    def test_training_goes_on_after_an_interrupt(self):
        self.test_sigint_stops_training_and_raises_keyboard_interrupt()
        result = hogwild.train(self.x, self.y, hidden=[32], workers=2, epochs=1)
        self.assertEqual(result.examples, 2000)
        self.assertFalse(result.stopped_early)


if __name__ == "__main__":
    testing.fail_if_hung()
    unittest.main()
