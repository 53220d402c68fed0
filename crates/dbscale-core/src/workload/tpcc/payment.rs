//! Payment (2.5) and Order-Status (2.6): both find their customer by last name 60% of the
//! time, taking the middle one of the matches sorted by first name (2.5.2.2).

use rand::rngs::SmallRng;
use rand::Rng;

use super::rows::decimal_text;
use super::statements::*;
use super::terminal::{int_at, missing, text_at, TpccClient, Txn, BY_LAST_NAME, REMOTE_PAYMENTS};
use crate::driver::{DbError, Param};

/// C_DATA holds at most this many characters.
const C_DATA_MAX: usize = 500;

/// The customer a transaction works on: by id, or the middle match of a last name.
async fn find_customer(
    client: &TpccClient,
    txn: &mut Txn<'_>,
    rng: &mut SmallRng,
    (w, d): (i64, i64),
) -> Result<i64, DbError> {
    if rng.gen_range(0..100) >= 60 {
        return Ok(client.customer_id(rng));
    }
    txn.tally[BY_LAST_NAME] += 1;
    let mut name = String::new();
    client.last_name(rng, &mut name);
    let ids = txn
        .fetch(
            CUSTOMERS_BY_LAST,
            &[Param::Int(w), Param::Int(d), Param::Text(&name)],
        )
        .await?;
    if ids.is_empty() {
        return Err(missing("customer with a drawn last name"));
    }
    // The row at position ceil(n / 2), counting from 1.
    Ok(int_at(&ids[(ids.len() - 1) / 2], 0))
}

pub async fn payment(
    client: &TpccClient,
    txn: &mut Txn<'_>,
    rng: &mut SmallRng,
) -> Result<(), DbError> {
    let w = client.home_w;
    let d = client.any_district(rng);
    let (c_w, c_d) = if rng.gen_range(0..100) < 85 {
        (w, d)
    } else {
        (client.remote_warehouse(rng), client.any_district(rng))
    };
    if c_w != w {
        txn.tally[REMOTE_PAYMENTS] += 1;
    }
    let cents = rng.gen_range(100..=500_000);
    let amount = decimal_text(cents, 2);
    let amount = Param::Text(&amount);

    txn.exec(BEGIN, &[]).await?;
    txn.exec(P_UPDATE_WAREHOUSE, &[amount, Param::Int(w)])
        .await?;
    let warehouse = txn
        .fetch_one(P_WAREHOUSE, &[Param::Int(w)], "warehouse")
        .await?;
    txn.exec(P_UPDATE_DISTRICT, &[amount, Param::Int(w), Param::Int(d)])
        .await?;
    let district = txn
        .fetch_one(P_DISTRICT, &[Param::Int(w), Param::Int(d)], "district")
        .await?;
    let c = find_customer(client, txn, rng, (c_w, c_d)).await?;
    let key = [Param::Int(c_w), Param::Int(c_d), Param::Int(c)];
    let customer = txn.fetch_one(P_CUSTOMER, &key, "customer").await?;
    if text_at(&customer, 10) == "BC" {
        let data = txn.fetch_one(P_CUSTOMER_DATA, &key, "customer").await?;
        let mut new_data = format!(
            "{c} {c_d} {c_w} {d} {w} {} | {}",
            decimal_text(cents, 2),
            text_at(&data, 0)
        );
        new_data.truncate(C_DATA_MAX);
        txn.exec(
            P_UPDATE_CUSTOMER_DATA,
            &[
                amount,
                amount,
                Param::Text(&new_data),
                key[0],
                key[1],
                key[2],
            ],
        )
        .await?;
    } else {
        txn.exec(P_UPDATE_CUSTOMER, &[amount, amount, key[0], key[1], key[2]])
            .await?;
    }
    let h_data = format!("{}    {}", text_at(&warehouse, 0), text_at(&district, 0));
    txn.exec(
        P_INSERT_HISTORY,
        &[
            Param::Int(c_d),
            Param::Int(c_w),
            Param::Int(c),
            Param::Int(d),
            Param::Int(w),
            amount,
            Param::Text(&h_data),
        ],
    )
    .await?;
    txn.exec(COMMIT, &[]).await?;
    Ok(())
}

pub async fn order_status(
    client: &TpccClient,
    txn: &mut Txn<'_>,
    rng: &mut SmallRng,
) -> Result<(), DbError> {
    let w = client.home_w;
    let d = client.any_district(rng);
    txn.exec(BEGIN, &[]).await?;
    let c = find_customer(client, txn, rng, (w, d)).await?;
    let key = [Param::Int(w), Param::Int(d), Param::Int(c)];
    txn.fetch_one(OS_CUSTOMER, &key, "customer").await?;
    let order = txn.fetch(OS_LAST_ORDER, &key).await?;
    if let Some(order) = order.first() {
        let o = int_at(order, 0);
        txn.fetch(OS_LINES, &[Param::Int(w), Param::Int(d), Param::Int(o)])
            .await?;
    }
    txn.exec(COMMIT, &[]).await?;
    Ok(())
}
