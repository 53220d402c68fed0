"""The sampled wait-event histogram and its classes."""

from __future__ import annotations

from dbscale.observe.waits import WaitHistogram, classify


def test_classes_of_postgres_and_mysql_events() -> None:
    assert classify("CPU") == "cpu"
    assert classify("Lock:transactionid") == "lock"
    assert classify("LWLock:BufferContent") == "lwlock"
    assert classify("LWLock:WALWrite") == "wal"
    assert classify("IO:WALSync") == "wal"
    assert classify("IO:DataFileRead") == "io"
    assert classify("Client:ClientRead") == "client"
    assert classify("IPC:SyncRep") == "wal"
    assert classify("Activity:WalWriterMain") == "other"
    assert classify("State:updating") == "cpu"
    assert classify("State:Waiting for table metadata lock") == "lock"
    assert classify("State:waiting for handler commit") == "io"
    assert classify("State:Sending to client") == "client"


def test_postgres_samples_add_up() -> None:
    waits = WaitHistogram()
    waits.add([["active", "Lock:transactionid", "6"], ["active", "CPU", "2"], ["idle", None, "8"]])
    waits.add([["active", "Lock:transactionid", "4"], ["active", "LWLock:LockManager", "2"],
               ["idle in transaction", None, "2"], ["starting", None, "1"]])  # fmt: skip
    assert waits.samples == 2
    assert waits.active == 14
    assert waits.sessions == 25
    shares = waits.class_shares()
    assert shares["lock"] == 10 / 14
    assert shares["lwlock"] == 2 / 14
    assert waits.top_events(1) == [("Lock:transactionid", 10 / 14)]
    record = waits.to_record(150.0)
    assert record.events == {"Lock:transactionid": 10, "CPU": 2, "LWLock:LockManager": 2}
    assert record.states["idle"] == 8
    assert record.active_mean == 7.0
    assert WaitHistogram.from_record(record).class_shares() == shares


def test_mysql_row_lock_waits_move_out_of_busy_states() -> None:
    waits = WaitHistogram()
    waits.add([["active", "State:updating", 5], ["active", "State:Sending data", 1],
               ["idle", None, 2], ["lock", "Lock:innodb row lock", 4]])  # fmt: skip
    assert waits.events == {"Lock:innodb row lock": 4, "State:updating": 1, "State:Sending data": 1}
    assert waits.active == 6
    assert waits.class_shares()["lock"] == 4 / 6


def test_empty_histogram() -> None:
    waits = WaitHistogram()
    assert waits.class_shares()["cpu"] == 0.0
    assert waits.top_events() == []
    assert waits.to_record(100).samples == 0
