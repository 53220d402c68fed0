"""Per-second rows as a compact column table, and their means."""

from __future__ import annotations

from dbscale.observe.tables import column_table, window_means


def test_column_table_rounds_and_drops_quiet_interfaces() -> None:
    rows = [
        (1.0, {"interval_s": 1.0, "client_cpu_cores": 0.12345, "host_user_pct": 51.26,
               "net.lo.rx_bytes_per_s": 1000.4, "net.eth0.rx_bytes_per_s": 0.0}),
        (2.0, {"interval_s": 1.0, "client_cpu_cores": 0.2, "host_user_pct": 49.0,
               "net.lo.rx_bytes_per_s": 2000.6, "net.eth0.rx_bytes_per_s": 0.0}),
    ]  # fmt: skip
    table = column_table(rows)
    assert table.columns == [
        "t_s", "interval_s", "client_cpu_cores", "host_user_pct", "net.lo.rx_bytes_per_s",
    ]  # fmt: skip
    assert table.rows[0] == [1.0, 1.0, 0.123, 51.3, 1000]
    assert table.as_rows()[1]["net.lo.rx_bytes_per_s"] == 2001
    assert table.mean["client_cpu_cores"] == 0.162


def test_window_means_weight_by_interval() -> None:
    rows = [
        {"interval_s": 1.0, "client_cpu_cores": 1.0},
        {"interval_s": 3.0, "client_cpu_cores": 0.0},
    ]
    assert window_means(rows) == {"client_cpu_cores": 0.25}
    assert window_means([]) == {}
