//! Delivery (2.7) as one transaction over the home warehouse's ten districts (as CockroachDB's
//! workload and go-tpc run it, not deferred); a district without an undelivered order is
//! skipped and counted. Stock-Level (2.8): the terminal's own district, threshold 10-20, the
//! items of its last 20 orders.

use rand::rngs::SmallRng;
use rand::Rng;

use super::rows::decimal_text;
use super::statements::*;
use super::terminal::{int_at, units_at, TpccClient, Txn, SKIPPED_DELIVERIES};
use crate::driver::{DbError, Param};

pub async fn delivery(
    client: &TpccClient,
    txn: &mut Txn<'_>,
    rng: &mut SmallRng,
) -> Result<(), DbError> {
    let w = Param::Int(client.home_w);
    let carrier = Param::Int(rng.gen_range(1..=10));
    txn.exec(BEGIN, &[]).await?;
    for district in 1..=10 {
        let d = Param::Int(district);
        let oldest = txn.fetch(D_OLDEST, &[w, d]).await?;
        let Some(row) = oldest.first() else {
            txn.tally[SKIPPED_DELIVERIES] += 1;
            continue;
        };
        let o = Param::Int(int_at(row, 0));
        txn.exec(D_DELETE, &[w, d, o]).await?;
        let order = txn
            .fetch_one(D_ORDER, &[w, d, o], "order of a new order")
            .await?;
        let c = Param::Int(int_at(&order, 0));
        txn.exec(D_UPDATE_ORDER, &[carrier, w, d, o]).await?;
        txn.exec(D_UPDATE_LINES, &[w, d, o]).await?;
        let sum = txn.fetch_one(D_SUM, &[w, d, o], "order line sum").await?;
        let total = decimal_text(units_at(&sum, 0, 2), 2);
        txn.exec(D_UPDATE_CUSTOMER, &[Param::Text(&total), w, d, c])
            .await?;
    }
    txn.exec(COMMIT, &[]).await?;
    Ok(())
}

pub async fn stock_level(
    client: &TpccClient,
    txn: &mut Txn<'_>,
    rng: &mut SmallRng,
) -> Result<(), DbError> {
    let (w, d) = (Param::Int(client.home_w), Param::Int(client.home_d));
    let threshold = Param::Int(rng.gen_range(10..=20));
    let district = txn.fetch_one(SL_DISTRICT, &[w, d], "district").await?;
    let next = int_at(&district, 0);
    txn.fetch(
        SL_COUNT,
        &[w, d, Param::Int(next), Param::Int(next - 20), threshold],
    )
    .await?;
    Ok(())
}
