//! Tells the integration tests (tests/it) which test servers are configured: `cfg(test_pg)` and
//! `cfg(test_mysql)` when their URLs are set, both when `DBSCALE_REQUIRE_SERVERS=1` (CI), where
//! a missing server must fail the tests rather than leave them ignored. Nothing else uses these.

use std::env;

fn configured(name: &str) -> bool {
    env::var(name).is_ok_and(|value| !value.is_empty())
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(test_pg)");
    println!("cargo::rustc-check-cfg=cfg(test_mysql)");
    for name in [
        "DBSCALE_TEST_PG_URL",
        "DBSCALE_TEST_MYSQL_URL",
        "DBSCALE_REQUIRE_SERVERS",
    ] {
        println!("cargo::rerun-if-env-changed={name}");
    }
    println!("cargo::rerun-if-changed=build.rs");
    let required = env::var("DBSCALE_REQUIRE_SERVERS").as_deref() == Ok("1");
    if required || configured("DBSCALE_TEST_PG_URL") {
        println!("cargo::rustc-cfg=test_pg");
    }
    if required || configured("DBSCALE_TEST_MYSQL_URL") {
        println!("cargo::rustc-cfg=test_mysql");
    }
}
