"""tui/inbox.py: reads from a network thread reach the app's thread in order, a slice at a time,
and none is ever left without a drain scheduled."""

from __future__ import annotations

import queue
import threading
import time

from callscope.tui.inbox import Inbox


class Loop:
    """Stands in for the app's message queue: ``schedule`` is thread-safe, ``run`` drains it."""

    def __init__(self) -> None:
        self.pending: queue.SimpleQueue = queue.SimpleQueue()
        self.scheduled = 0

    def schedule(self, callback) -> None:
        self.scheduled += 1
        self.pending.put(callback)

    def run(self, until_empty: bool = True) -> int:
        ran = 0
        while not self.pending.empty():
            self.pending.get()()
            ran += 1
        return ran


def test_items_are_handled_in_order_and_one_wake_up_serves_many_puts():
    loop, seen, slices = Loop(), [], []
    inbox = Inbox(loop.schedule, seen.append, after=lambda: slices.append(len(seen)))
    for i in range(1000):
        inbox.put(i)
    assert loop.scheduled == 1  # one wake-up while items wait, not one per read
    loop.run()
    assert seen == list(range(1000))
    assert slices == [1000] and len(inbox) == 0


def test_a_slice_ends_after_its_budget_and_schedules_the_rest():
    loop, seen = Loop(), []

    def slow(item: int) -> None:
        time.sleep(0.002)
        seen.append(item)

    slices: list[int] = []
    inbox = Inbox(loop.schedule, slow, after=lambda: slices.append(len(seen)), slice_seconds=0.01)
    for i in range(30):
        inbox.put(i)
    loop.pending.get()()  # one slice only
    assert 0 < len(seen) < 30  # it yielded with items left...
    assert not loop.pending.empty()  # ...and scheduled the rest
    loop.run()
    assert seen == list(range(30)) and len(slices) > 1


def test_drain_everything_empties_the_queue_whatever_the_budget():
    loop, seen = Loop(), []
    inbox = Inbox(loop.schedule, lambda i: (time.sleep(0.001), seen.append(i)), slice_seconds=0.0)
    for i in range(20):
        inbox.put(i)
    assert inbox.drain(everything=True) == 20 and seen == list(range(20))


def test_no_item_is_left_behind_when_a_thread_puts_while_the_app_drains():
    loop, seen = Loop(), []
    inbox = Inbox(loop.schedule, seen.append, slice_seconds=0.0005)
    total = 20_000

    def producer() -> None:
        for i in range(total):
            inbox.put(i)

    thread = threading.Thread(target=producer)
    thread.start()
    while thread.is_alive():
        loop.run()
    thread.join()
    loop.run()
    assert seen == list(range(total))  # in order, nothing lost, nothing handled twice
    assert loop.scheduled < total  # coalesced


def test_the_rest_of_a_backlog_resumes_through_resume_not_the_wake_up():
    # In the app, resume is call_after_refresh: the next slice waits for keys and a paint
    # instead of going straight back into the app's queue (which would starve them).
    wake, resume, seen = Loop(), Loop(), []
    inbox = Inbox(wake.schedule, lambda i: (time.sleep(0.002), seen.append(i)),
                  resume=resume.schedule, slice_seconds=0.005)
    for i in range(20):
        inbox.put(i)
    assert wake.scheduled == 1
    wake.run()
    assert resume.scheduled == 1 and wake.scheduled == 1 and len(seen) < 20
    while resume.run():
        pass
    assert seen == list(range(20)) and wake.scheduled == 1


def test_an_error_in_handle_leaves_the_rest_scheduled():
    loop, seen = Loop(), []

    def handle(item: int) -> None:
        if item == 3:
            raise ValueError("bad read")
        seen.append(item)

    inbox = Inbox(loop.schedule, handle)
    for i in range(6):
        inbox.put(i)
    callback = loop.pending.get()
    try:
        callback()
    except ValueError:
        pass
    assert seen == [0, 1, 2] and not loop.pending.empty()  # the rest did not wait for a put
    loop.run()
    assert seen == [0, 1, 2, 4, 5]


def test_a_full_backlog_makes_the_producer_wait_and_loses_nothing():
    loop, seen, peak = Loop(), [], [0]
    inbox: Inbox[int] = Inbox(loop.schedule, seen.append, max_waiting=5)

    def producer() -> None:
        for i in range(200):
            inbox.put(i)
            peak[0] = max(peak[0], len(inbox))

    thread = threading.Thread(target=producer)
    thread.start()
    time.sleep(0.05)
    assert thread.is_alive() and len(inbox) <= 6  # blocked: the app has not drained yet
    while thread.is_alive():
        loop.run()
        time.sleep(0.001)
    loop.run()
    assert seen == list(range(200)) and peak[0] <= 6


def test_close_releases_a_producer_waiting_for_room():
    loop = Loop()
    inbox: Inbox[int] = Inbox(loop.schedule, lambda i: None, max_waiting=1)
    thread = threading.Thread(target=lambda: [inbox.put(i) for i in range(10)])
    thread.start()
    time.sleep(0.05)
    assert thread.is_alive()
    inbox.close()  # the app is closing: nobody drains any more
    thread.join(2)
    assert not thread.is_alive() and len(inbox) == 10
