//! The statements YCSB's JDBC binding sends, one per operation (two for a read-modify-write), in
//! the order the clients find them by index.

use super::options::Options;
use crate::driver::{numbered_placeholders, Dialect, Statement};

/// Where each statement is in the prepared list, for `field_count` fields.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    fields: usize,
}

impl Layout {
    pub fn new(field_count: u32) -> Self {
        Self {
            fields: field_count as usize,
        }
    }

    pub const READ_ALL: usize = 0;

    pub fn read_field(&self, field: usize) -> usize {
        1 + field
    }

    pub fn update_field(&self, field: usize) -> usize {
        1 + self.fields + field
    }

    pub fn update_all(&self) -> usize {
        1 + 2 * self.fields
    }

    pub fn insert(&self) -> usize {
        2 + 2 * self.fields
    }

    pub fn scan_all(&self) -> usize {
        3 + 2 * self.fields
    }

    pub fn scan_field(&self, field: usize) -> usize {
        4 + 2 * self.fields + field
    }

    #[cfg(test)]
    pub fn count(&self) -> usize {
        4 + 3 * self.fields
    }
}

/// The statements in [`Layout`]'s order.
pub fn statements(o: &Options, dialect: Dialect) -> Vec<Statement> {
    let t = &o.table;
    let fields: Vec<String> = (0..o.field_count).map(|i| format!("FIELD{i}")).collect();
    let sql = |text: String| numbered_placeholders(&text, dialect);
    let mut list = vec![Statement::new(
        "read",
        sql(format!("SELECT * FROM {t} WHERE YCSB_KEY = ?")),
    )];
    for f in &fields {
        list.push(Statement::new(
            format!("read_{}", f.to_lowercase()),
            sql(format!("SELECT {f} FROM {t} WHERE YCSB_KEY = ?")),
        ));
    }
    for f in &fields {
        list.push(Statement::new(
            format!("update_{}", f.to_lowercase()),
            sql(format!("UPDATE {t} SET {f} = ? WHERE YCSB_KEY = ?")),
        ));
    }
    let sets: Vec<String> = fields.iter().map(|f| format!("{f} = ?")).collect();
    list.push(Statement::new(
        "update_all",
        sql(format!(
            "UPDATE {t} SET {} WHERE YCSB_KEY = ?",
            sets.join(", ")
        )),
    ));
    let marks = vec!["?"; fields.len() + 1].join(", ");
    list.push(Statement::new(
        "insert",
        sql(format!(
            "INSERT INTO {t} (YCSB_KEY, {}) VALUES ({marks})",
            fields.join(", ")
        )),
    ));
    list.push(Statement::new(
        "scan",
        sql(format!(
            "SELECT * FROM {t} WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"
        )),
    ));
    for f in &fields {
        list.push(Statement::new(
            format!("scan_{}", f.to_lowercase()),
            sql(format!(
                "SELECT {f} FROM {t} WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"
            )),
        ));
    }
    list
}

/// YCSB's JDBC table: the key and `fieldcount` text fields; `with_key: false` leaves the
/// primary key to be added after the rows.
pub fn create_table(o: &Options, dialect: Dialect, with_key: bool) -> String {
    let fields: Vec<String> = (0..o.field_count)
        .map(|i| format!("FIELD{i} TEXT"))
        .collect();
    let engine = match dialect {
        Dialect::Mysql => " /*! ENGINE = InnoDB */",
        Dialect::Postgres => "",
    };
    format!(
        "CREATE TABLE {}(YCSB_KEY VARCHAR(255){} NOT NULL, {}){engine}",
        o.table,
        if with_key { " PRIMARY KEY" } else { "" },
        fields.join(", ")
    )
}
