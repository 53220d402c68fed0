//! New-Order (2.4): 5-15 distinct items drawn by NURand, 1% of lines from a remote supply
//! warehouse, and 1% of orders rolled back because their last item id is unused (2.4.1.4).
//! Rolled-back orders end with ROLLBACK and count as completed New-Orders, as in CockroachDB's
//! workload, go-tpc and tpcc-mysql; the tally says how many there were.

use rand::rngs::SmallRng;
use rand::Rng;

use super::data::ITEMS;
use super::random::{nurand, A_ITEM};
use super::statements::*;
use super::terminal::{
    int_at, missing, text_at, units_at, TpccClient, Txn, ORDER_LINES, REMOTE_LINES, ROLLED_BACK,
};
use crate::driver::{DbError, Param};

/// One order line as drawn.
#[derive(Debug, Clone, Copy)]
struct Line {
    item: i64,
    supply_w: i64,
    quantity: i64,
}

/// An item id no row has: the rolled-back orders' last item.
const UNUSED_ITEM: i64 = ITEMS + 1;

pub async fn run(
    client: &TpccClient,
    txn: &mut Txn<'_>,
    rng: &mut SmallRng,
) -> Result<(), DbError> {
    let w = client.home_w;
    let d = client.any_district(rng);
    let c = client.customer_id(rng);
    let lines = draw_lines(client, rng);
    let count = lines.len();
    let remote = lines.iter().filter(|l| l.supply_w != w).count();
    txn.tally[ORDER_LINES] += count as u32;
    txn.tally[REMOTE_LINES] += remote as u32;

    txn.exec(BEGIN, &[]).await?;
    let ids: Vec<Param> = lines.iter().map(|l| Param::Int(l.item)).collect();
    let items = txn.fetch(items_in(count), &ids).await?;
    if items.len() < count {
        txn.exec(ROLLBACK, &[]).await?;
        txn.tally[ROLLED_BACK] += 1;
        return Ok(());
    }
    let all_local = remote == 0;
    let order = insert_order(txn, [w, d, c], count, all_local).await?;
    let stock = read_stock(txn, w, all_local, &lines, &ids).await?;
    let price_of = |item: i64| {
        items
            .iter()
            .find(|row| int_at(row, 0) == item)
            .map_or(0, |row| units_at(row, 1, 2))
    };
    let filled = fill_lines(&lines, &stock, d, price_of)?;
    write_stock(txn, w, all_local, &lines, &filled, &ids).await?;
    let mut params: Vec<Param> = Vec::with_capacity(count * 9);
    for (number, (line, fill)) in lines.iter().zip(&filled).enumerate() {
        params.extend([
            Param::Int(order),
            Param::Int(d),
            Param::Int(w),
            Param::Int(number as i64 + 1),
            Param::Int(line.item),
            Param::Int(line.supply_w),
            Param::Int(line.quantity),
            Param::Text(&fill.amount),
            Param::Text(&fill.dist_info),
        ]);
    }
    txn.exec(insert_lines(count), &params).await?;
    txn.exec(COMMIT, &[]).await?;
    Ok(())
}

/// 5-15 distinct items by NURand, 1% from a remote warehouse; 1% of orders end with an unused
/// item. Sorted so every terminal locks stock rows in one order (fewer deadlocks).
fn draw_lines(client: &TpccClient, rng: &mut SmallRng) -> Vec<Line> {
    let w = client.home_w;
    let count = rng.gen_range(MIN_LINES..=MAX_LINES);
    let rollback = rng.gen_range(0..100) == 0;
    let c_ol = client.shape().constants.ol_i_id;
    let mut lines: Vec<Line> = Vec::with_capacity(count);
    while lines.len() < count {
        let item = if rollback && lines.len() == count - 1 {
            UNUSED_ITEM
        } else {
            nurand(rng, A_ITEM, c_ol, 1, ITEMS)
        };
        if lines.iter().any(|l| l.item == item) {
            continue;
        }
        let supply_w = if rng.gen_range(0..100) == 0 {
            client.remote_warehouse(rng)
        } else {
            w
        };
        lines.push(Line {
            item,
            supply_w,
            quantity: rng.gen_range(1..=10),
        });
    }
    lines.sort_unstable_by_key(|l| (l.supply_w, l.item));
    lines
}

/// Reads the warehouse, district and customer, takes the district's next order id and inserts
/// the order and its new-order row; the order id.
async fn insert_order(
    txn: &mut Txn<'_>,
    [w, d, c]: [i64; 3],
    count: usize,
    all_local: bool,
) -> Result<i64, DbError> {
    txn.fetch_one(NO_WAREHOUSE, &[Param::Int(w)], "warehouse")
        .await?;
    let district = txn
        .fetch_one(NO_DISTRICT, &[Param::Int(w), Param::Int(d)], "district")
        .await?;
    let order = int_at(&district, 1);
    txn.exec(
        NO_UPDATE_DISTRICT,
        &[Param::Int(order + 1), Param::Int(w), Param::Int(d)],
    )
    .await?;
    txn.fetch_one(
        NO_CUSTOMER,
        &[Param::Int(w), Param::Int(d), Param::Int(c)],
        "customer",
    )
    .await?;
    txn.exec(
        NO_INSERT_ORDER,
        &[
            Param::Int(order),
            Param::Int(d),
            Param::Int(w),
            Param::Int(c),
            Param::Int(count as i64),
            Param::Int(i64::from(all_local)),
        ],
    )
    .await?;
    txn.exec(
        NO_INSERT_NEW_ORDER,
        &[Param::Int(order), Param::Int(d), Param::Int(w)],
    )
    .await?;
    Ok(order)
}

/// One row as text values.
type Row = Vec<Option<String>>;

/// The ordered items' stock rows: one statement when every line is local, else row by row.
async fn read_stock(
    txn: &mut Txn<'_>,
    w: i64,
    all_local: bool,
    lines: &[Line],
    ids: &[Param<'_>],
) -> Result<Vec<Row>, DbError> {
    if all_local {
        let mut params = vec![Param::Int(w)];
        params.extend(ids.iter().copied());
        return txn.fetch(stock_in(lines.len()), &params).await;
    }
    let mut rows = Vec::with_capacity(lines.len());
    for line in lines {
        let params = [Param::Int(line.supply_w), Param::Int(line.item)];
        rows.push(txn.fetch_one(NO_STOCK_ONE, &params, "stock row").await?);
    }
    Ok(rows)
}

/// What each line takes from its stock row: the new quantity, the district's info, the amount.
struct Fill {
    new_quantity: i64,
    dist_info: String,
    amount: String,
}

/// Per line from its stock row (s_i_id, s_quantity, s_data, s_dist_01..10: the district's is
/// column 2 + d): the quantity left (restocked by 91 below 10), the district info and the amount.
fn fill_lines(
    lines: &[Line],
    stock: &[Row],
    d: i64,
    price_of: impl Fn(i64) -> i64,
) -> Result<Vec<Fill>, DbError> {
    lines
        .iter()
        .map(|line| {
            let row = stock
                .iter()
                .find(|row| int_at(row, 0) == line.item)
                .ok_or_else(|| missing("stock row for an ordered item"))?;
            let quantity = int_at(row, 1);
            let left = quantity - line.quantity;
            Ok(Fill {
                new_quantity: if left >= 10 { left } else { left + 91 },
                dist_info: text_at(row, 2 + d as usize).to_string(),
                amount: super::rows::decimal_text(line.quantity * price_of(line.item), 2),
            })
        })
        .collect()
}

/// The stock updates: one statement when every line is local, else one per line.
async fn write_stock(
    txn: &mut Txn<'_>,
    w: i64,
    all_local: bool,
    lines: &[Line],
    filled: &[Fill],
    ids: &[Param<'_>],
) -> Result<(), DbError> {
    if all_local {
        let mut params: Vec<Param> = Vec::with_capacity(5 * lines.len() + 1);
        for (line, fill) in lines.iter().zip(filled) {
            params.extend([Param::Int(line.item), Param::Int(fill.new_quantity)]);
        }
        for line in lines {
            params.extend([Param::Int(line.item), Param::Int(line.quantity)]);
        }
        params.push(Param::Int(w));
        params.extend(ids.iter().copied());
        txn.exec(update_stock(lines.len()), &params).await?;
        return Ok(());
    }
    for (line, fill) in lines.iter().zip(filled) {
        let params = [
            Param::Int(fill.new_quantity),
            Param::Int(line.quantity),
            Param::Int(i64::from(line.supply_w != w)),
            Param::Int(line.supply_w),
            Param::Int(line.item),
        ];
        txn.exec(NO_UPDATE_STOCK, &params).await?;
    }
    Ok(())
}
