//! What every loader shares: running several loaders on one event loop, and DDL with the
//! statement named in its error.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use std::time::Instant;

use crate::driver::{Connection, DbError};
use crate::error::Unprepared;
use crate::workload::PrepareStep;
use crate::Error;

/// Runs one SQL text; a failure names (the start of) the statement.
pub(crate) async fn exec(conn: &mut Connection, sql: &str) -> Result<(), Error> {
    conn.batch(sql)
        .await
        .map(|_| ())
        .map_err(|source| Error::Sql {
            context: sql.chars().take(120).collect(),
            source,
        })
}

/// The server said a table is missing (PostgreSQL's undefined_table, MySQL's ER_NO_SUCH_TABLE).
pub(crate) fn is_missing_table(e: &DbError) -> bool {
    matches!(e.code.as_deref(), Some("42P01" | "1146"))
}

/// A check's failure: a missing table (PostgreSQL's undefined_table, MySQL's ER_NO_SUCH_TABLE)
/// means the data is not prepared, `unprepared` saying so from the server's message; any other
/// failure is the statement's, in `context`.
pub(crate) fn missing_or_failed(
    e: DbError,
    unprepared: impl FnOnce(&str) -> Unprepared,
    context: impl FnOnce() -> String,
) -> Error {
    if is_missing_table(&e) {
        Error::NotPrepared(unprepared(&e.message))
    } else {
        Error::Sql {
            context: context(),
            source: e,
        }
    }
}

/// A prepare or cleanup step named `name` that began at `begun` and ends now.
pub(crate) fn step(name: impl Into<String>, begun: Instant) -> PrepareStep {
    PrepareStep {
        name: name.into(),
        seconds: begun.elapsed().as_secs_f64(),
    }
}

/// Polls all futures on this task until every one is done; results in input order. (The
/// prepare runs on one single-threaded loop; the loaders overlap on their I/O waits.)
pub(crate) async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all_done = true;
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => {
                        *output = Some(value);
                        *slot = None;
                    }
                    Poll::Pending => all_done = false,
                }
            }
        }
        if all_done {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_all_keeps_input_order() {
        let out = crate::runtime::block_on(join_all(vec![
            Box::pin(async { 1 }) as Pin<Box<dyn Future<Output = i32>>>,
            Box::pin(async {
                tokio::task::yield_now().await;
                2
            }),
        ]))
        .unwrap();
        assert_eq!(out, vec![1, 2]);
    }
}
