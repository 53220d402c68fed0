//! The initial database population of clause 4.3.3.1, row by row: the spec's cardinalities,
//! value ranges and initial values (W_YTD 300,000.00, D_NEXT_O_ID 3001, C_BALANCE -10.00, ...).

use rand::rngs::SmallRng;
use rand::Rng;

use super::random::{self, NurandConstants};
use super::rows::RowBuffer;
use super::schema::columns;

pub const ITEMS: i64 = 100_000;
pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3_000;
pub const ORDERS: i64 = 3_000;
/// Orders from this id on are undelivered: they have a NEW-ORDER row and no carrier.
pub const FIRST_NEW_ORDER: i64 = 2_101;
pub const STOCK: i64 = ITEMS;

/// A buffer shaped for `table`'s columns.
pub fn buffer(table: &str) -> RowBuffer {
    RowBuffer::new(columns(table).len())
}

fn address(rng: &mut SmallRng, rows: &mut RowBuffer) {
    rows.astring(rng, 10, 20); // street 1
    rows.astring(rng, 10, 20); // street 2
    rows.astring(rng, 10, 20); // city
    rows.random_text(rng, |rng, s| {
        for _ in 0..2 {
            s.push(char::from(b'A' + rng.gen_range(0..26u8)));
        }
    });
    rows.random_text(rng, random::push_zip);
}

/// Items `from..=to`.
pub fn items(rng: &mut SmallRng, from: i64, to: i64, rows: &mut RowBuffer) {
    for id in from..=to {
        rows.int(id);
        rows.int(rng.gen_range(1..=10_000));
        rows.astring(rng, 14, 24);
        rows.decimal(rng.gen_range(100..=10_000), 2);
        rows.random_text(rng, random::push_data);
    }
}

/// Warehouse `w` into `warehouse`, its ten districts into `district`.
pub fn warehouse(rng: &mut SmallRng, w: i64, warehouse: &mut RowBuffer, district: &mut RowBuffer) {
    warehouse.int(w);
    warehouse.astring(rng, 6, 10);
    address(rng, warehouse);
    warehouse.decimal(rng.gen_range(0..=2_000), 4);
    warehouse.decimal(30_000_000, 2);
    for d in 1..=DISTRICTS {
        district.int(d);
        district.int(w);
        district.astring(rng, 6, 10);
        address(rng, district);
        district.decimal(rng.gen_range(0..=2_000), 4);
        district.decimal(3_000_000, 2);
        district.int(ORDERS + 1);
    }
}

/// Stock rows of warehouse `w` for items `from..=to`.
pub fn stock(rng: &mut SmallRng, w: i64, from: i64, to: i64, rows: &mut RowBuffer) {
    for item in from..=to {
        rows.int(item);
        rows.int(w);
        rows.int(rng.gen_range(10..=100));
        for _ in 0..10 {
            rows.astring(rng, 24, 24);
        }
        rows.int(0);
        rows.int(0);
        rows.int(0);
        rows.random_text(rng, random::push_data);
    }
}

/// The 3,000 customers of district (w, d) and their one history row each.
pub fn customers(
    rng: &mut SmallRng,
    constants: &NurandConstants,
    (w, d): (i64, i64),
    customer: &mut RowBuffer,
    history: &mut RowBuffer,
) {
    let mut last = String::new();
    for c in 1..=CUSTOMERS {
        customer.int(c);
        customer.int(d);
        customer.int(w);
        customer.astring(rng, 8, 16);
        customer.text("OE");
        // The first thousand cover every name once; the rest follow NURand with the load's C.
        let number = if c <= 1000 {
            c - 1
        } else {
            random::last_name_number(rng, constants.c_last)
        };
        random::last_name(number, &mut last);
        customer.text(&last);
        address(rng, customer);
        customer.random_text(rng, |rng, s| random::push_nstring(rng, 16, 16, s));
        customer.now();
        customer.text(if rng.gen_range(0..10) == 0 {
            "BC"
        } else {
            "GC"
        });
        customer.decimal(5_000_000, 2);
        customer.decimal(rng.gen_range(0..=5_000), 4);
        customer.decimal(-1_000, 2);
        customer.decimal(1_000, 2);
        customer.int(1);
        customer.int(0);
        customer.astring(rng, 300, 500);

        history.int(c);
        history.int(d);
        history.int(w);
        history.int(d);
        history.int(w);
        history.now();
        history.decimal(1_000, 2);
        history.astring(rng, 12, 24);
    }
}

/// The 3,000 orders of district (w, d), their lines, and the 900 undelivered ones' NEW-ORDER
/// rows. Returns the number of order lines.
pub fn orders(
    rng: &mut SmallRng,
    (w, d): (i64, i64),
    orders: &mut RowBuffer,
    new_orders: &mut RowBuffer,
    lines: &mut RowBuffer,
) -> u64 {
    let customers = random::permutation(rng, CUSTOMERS);
    let mut line_count = 0;
    for o in 1..=ORDERS {
        let delivered = o < FIRST_NEW_ORDER;
        let ol_cnt = rng.gen_range(5..=15);
        orders.int(o);
        orders.int(d);
        orders.int(w);
        orders.int(customers[(o - 1) as usize]);
        orders.now();
        if delivered {
            orders.int(rng.gen_range(1..=10));
        } else {
            orders.null();
        }
        orders.int(ol_cnt);
        orders.int(1);
        if !delivered {
            new_orders.int(o);
            new_orders.int(d);
            new_orders.int(w);
        }
        for number in 1..=ol_cnt {
            lines.int(o);
            lines.int(d);
            lines.int(w);
            lines.int(number);
            lines.int(rng.gen_range(1..=ITEMS));
            lines.int(w);
            if delivered {
                lines.now();
            } else {
                lines.null();
            }
            lines.int(5);
            lines.decimal(
                if delivered {
                    0
                } else {
                    rng.gen_range(1..=999_999)
                },
                2,
            );
            lines.astring(rng, 24, 24);
        }
        line_count += ol_cnt as u64;
    }
    line_count
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_district_has_the_spec_cardinalities() {
        let mut rng = SmallRng::seed_from_u64(9);
        let constants = NurandConstants::for_load(&mut rng);
        let (mut c, mut h) = (buffer("customer"), buffer("history"));
        customers(&mut rng, &constants, (1, 1), &mut c, &mut h);
        assert_eq!((c.rows(), h.rows()), (3000, 3000));
        let (mut o, mut no, mut ol) = (buffer("orders"), buffer("new_order"), buffer("order_line"));
        let lines = orders(&mut rng, (1, 1), &mut o, &mut no, &mut ol);
        assert_eq!((o.rows(), no.rows()), (3000, 900));
        assert_eq!(ol.rows() as u64, lines);
        assert!((27_000..33_000).contains(&lines), "{lines}");
        let (mut w, mut dist) = (buffer("warehouse"), buffer("district"));
        warehouse(&mut rng, 1, &mut w, &mut dist);
        assert_eq!((w.rows(), dist.rows()), (1, 10));
        let mut s = buffer("stock");
        stock(&mut rng, 1, 1, 100, &mut s);
        assert_eq!(s.rows(), 100);
        let mut i = buffer("item");
        items(&mut rng, 1, 10, &mut i);
        assert_eq!(i.rows(), 10);
    }
}
