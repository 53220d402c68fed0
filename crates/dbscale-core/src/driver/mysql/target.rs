//! A MySQL or MariaDB target of one host or several: `mysql://u@h1:3306,h2:3307/db` lists a
//! server and its failover candidates, as MySQL's own connectors read a host list. Each
//! connection takes the first host, in order (a random order with `load_balance_hosts=random`),
//! that accepts it. Several full URLs joined by commas are a cluster's nodes instead.

use rand::seq::SliceRandom;

use super::{MySqlConfig, MySqlConnection};
use crate::driver::{host_list_url, ConnectFailure, DbError, QueryProtocol, TlsMode};

#[derive(Debug, Clone)]
pub struct MySqlTarget {
    hosts: Vec<MySqlConfig>,
    random_order: bool,
}

impl MySqlTarget {
    pub fn parse(url: &str, tls: Option<TlsMode>) -> Result<Self, DbError> {
        let (url, random_order) = take_load_balance(url)?;
        let hosts = match url.split_once("://") {
            Some((scheme, rest)) => {
                let end = rest.find(['/', '?']).unwrap_or(rest.len());
                let (authority, tail) = rest.split_at(end);
                let (user, hostlist) = match authority.rsplit_once('@') {
                    Some((u, h)) => (format!("{u}@"), h),
                    None => (String::new(), authority),
                };
                hostlist
                    .split(',')
                    .map(|host| MySqlConfig::parse(&format!("{scheme}://{user}{host}{tail}"), tls))
                    .collect::<Result<Vec<_>, _>>()?
            }
            None => vec![MySqlConfig::parse(&url, tls)?],
        };
        Ok(MySqlTarget {
            hosts,
            random_order,
        })
    }

    /// Each host as a target of its own.
    pub fn split_hosts(&self) -> Vec<MySqlTarget> {
        self.hosts
            .iter()
            .map(|host| MySqlTarget {
                hosts: vec![host.clone()],
                random_order: false,
            })
            .collect()
    }

    /// A session on host `host` (of [`MySqlTarget::host_labels`]) alone.
    pub async fn connect_host(
        &self,
        host: usize,
        protocol: QueryProtocol,
    ) -> Result<MySqlConnection, DbError> {
        MySqlConnection::connect(self.hosts.get(host).unwrap_or(&self.hosts[0]), protocol).await
    }

    pub fn host_labels(&self) -> Vec<String> {
        self.hosts.iter().map(MySqlConfig::redacted).collect()
    }

    /// The target as a URL without the password: a single host's URL, or the host list.
    pub fn redacted(&self) -> String {
        if self.hosts.len() == 1 && !self.random_order {
            return self.hosts[0].redacted();
        }
        let params: &[(&str, &str)] = if self.random_order {
            &[("load_balance_hosts", "random")]
        } else {
            &[]
        };
        host_list_url(&self.host_labels(), params)
    }

    /// A session on the first host, in order, that takes it; with none, each host's reason.
    pub async fn connect(
        &self,
        protocol: QueryProtocol,
    ) -> Result<(MySqlConnection, usize), DbError> {
        if self.hosts.len() == 1 {
            return Ok((MySqlConnection::connect(&self.hosts[0], protocol).await?, 0));
        }
        let mut order: Vec<usize> = (0..self.hosts.len()).collect();
        if self.random_order {
            order.shuffle(&mut rand::thread_rng());
        }
        let mut reasons = Vec::new();
        let mut failure = ConnectFailure::Unreachable;
        for i in order {
            match MySqlConnection::connect(&self.hosts[i], protocol).await {
                Ok(connection) => return Ok((connection, i)),
                Err(error) => {
                    failure = error.connect.unwrap_or(failure);
                    reasons.push(format!("{}: {}", self.hosts[i].redacted(), error.message));
                }
            }
        }
        Err(DbError::connect(
            failure,
            format!("no host took the connection ({})", reasons.join("; ")),
        ))
    }
}

/// `load_balance_hosts=random|disable` taken out of the URL's query (MySqlConfig does not know
/// it): the URL without it, and whether the order is random.
fn take_load_balance(url: &str) -> Result<(String, bool), DbError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), false));
    };
    let mut random = false;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("load_balance_hosts", "random")) => random = true,
            Some(("load_balance_hosts", "disable")) => random = false,
            Some(("load_balance_hosts", other)) => {
                return Err(DbError::invalid_target(format!(
                    "invalid load_balance_hosts value: \"{other}\" (disable or random)"
                )))
            }
            _ => kept.push(pair),
        }
    }
    Ok(match kept.is_empty() {
        true => (base.to_string(), random),
        false => (format!("{base}?{}", kept.join("&")), random),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_list_is_failover_candidates() {
        let t = MySqlTarget::parse(
            "mysql://root:pw@h1:3306,h2:3307/db?connect_timeout=2&load_balance_hosts=random",
            None,
        )
        .unwrap();
        assert_eq!(
            t.host_labels(),
            ["mysql://root@h1:3306/db", "mysql://root@h2:3307/db"]
        );
        assert!(t.random_order);
        assert!(!t.redacted().contains("pw"), "{}", t.redacted());
        assert!(t.redacted().starts_with("mysql://root@h1:3306,h2:3307/db"));
        let single = MySqlTarget::parse("mysql://root@h1/db", None).unwrap();
        assert_eq!(single.host_labels(), ["mysql://root@h1:3306/db"]);
        assert!(MySqlTarget::parse("mysql://r@h1,h2/db?load_balance_hosts=x", None).is_err());
    }
}
