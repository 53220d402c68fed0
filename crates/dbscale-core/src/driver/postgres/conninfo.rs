//! The two spellings of a PostgreSQL target, `postgresql://` URIs and libpq `key=value` strings,
//! reduced to one list of `(keyword, value)` pairs so that [`super::PgConfig`] interprets the
//! keywords in one place, whichever spelling the user chose.

use percent_encoding::percent_decode_str;

use crate::driver::DbError;

/// Keyword/value pairs in the order they appeared; later pairs override earlier ones.
pub(super) type Pairs = Vec<(String, String)>;

/// Splits a target into keyword pairs. An empty string means "all defaults", as in libpq.
pub(super) fn parse(target: &str) -> Result<Pairs, DbError> {
    let target = target.trim();
    if let Some(rest) = target
        .strip_prefix("postgresql://")
        .or_else(|| target.strip_prefix("postgres://"))
    {
        parse_uri(rest)
    } else if target.contains("://") {
        let scheme = target.split("://").next().unwrap_or_default();
        Err(DbError::invalid_target(format!(
            "unsupported URL scheme \"{scheme}://\": expected postgresql:// or postgres://"
        )))
    } else if target.is_empty() || target.contains('=') {
        parse_key_values(target)
    } else {
        Err(DbError::invalid_target(format!(
            "\"{target}\" is neither a postgresql:// URL nor a key=value connection string"
        )))
    }
}

/// `[user[:password]@][host][:port][/dbname][?key=value&...]`, everything percent-decoded.
fn parse_uri(rest: &str) -> Result<Pairs, DbError> {
    let mut pairs = Pairs::new();
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let (authority, dbname) = match before_query.split_once('/') {
        Some((a, d)) => (a, Some(d)),
        None => (before_query, None),
    };
    // A password may hold an unencoded '@'; the host never does, so split at the last one.
    let hostport = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => {
            let (user, password) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                pairs.push(("user".into(), decode(user, "user name")?));
            }
            if let Some(password) = password {
                pairs.push(("password".into(), decode(password, "password")?));
            }
            hostport
        }
        None => authority,
    };
    parse_hostport(hostport, &mut pairs)?;
    if let Some(dbname) = dbname.filter(|d| !d.is_empty()) {
        pairs.push(("dbname".into(), decode(dbname, "database name")?));
    }
    for param in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let Some((key, value)) = param.split_once('=') else {
            return Err(DbError::invalid_target(format!(
                "URL query parameter \"{param}\" has no value (expected key=value)"
            )));
        };
        pairs.push((decode(key, "parameter name")?, decode(value, key)?));
    }
    Ok(pairs)
}

/// `host[:port]`, or libpq's list `host1:port1,host2:port2` (a host without a port has the
/// default one): the hosts and the ports become comma-separated `host` and `port` values.
fn parse_hostport(hostport: &str, pairs: &mut Pairs) -> Result<(), DbError> {
    let entries = split_hosts(hostport);
    if entries.len() == 1 {
        let (host, port) = host_and_port(hostport)?;
        if !host.is_empty() {
            pairs.push(("host".into(), host));
        }
        if let Some(port) = port.filter(|p| !p.is_empty()) {
            pairs.push(("port".into(), port.to_string()));
        }
        return Ok(());
    }
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for entry in entries {
        let (host, port) = host_and_port(entry)?;
        if host.contains(',') {
            return Err(DbError::invalid_target(format!(
                "the host \"{host}\" holds an encoded comma"
            )));
        }
        hosts.push(host);
        ports.push(port.unwrap_or_default().to_string());
    }
    pairs.push(("host".into(), hosts.join(",")));
    if ports.iter().any(|p| !p.is_empty()) {
        pairs.push(("port".into(), ports.join(",")));
    }
    Ok(())
}

/// The entries of a host list, split at commas outside `[...]` (IPv6 addresses).
fn split_hosts(hostport: &str) -> Vec<&str> {
    let (mut entries, mut start, mut bracket) = (Vec::new(), 0, false);
    for (i, c) in hostport.char_indices() {
        match c {
            '[' => bracket = true,
            ']' => bracket = false,
            ',' if !bracket => {
                entries.push(&hostport[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    entries.push(&hostport[start..]);
    entries
}

fn host_and_port(hostport: &str) -> Result<(String, Option<&str>), DbError> {
    Ok(if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(|| {
            DbError::invalid_target(format!("unclosed '[' in the host \"{hostport}\""))
        })?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| {
                DbError::invalid_target(format!("unexpected \"{p}\" after the IPv6 host"))
            })?),
        };
        (host.to_string(), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (decode(h, "host")?, Some(p)),
            None => (decode(hostport, "host")?, None),
        }
    })
}

fn decode(text: &str, what: &str) -> Result<String, DbError> {
    percent_decode_str(text)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| {
            DbError::invalid_target(format!(
                "the {what} in the URL is not valid percent-encoded UTF-8"
            ))
        })
}

/// libpq's `key = value` list: whitespace-separated, values optionally single-quoted with `\'`
/// and `\\` escapes inside the quotes.
fn parse_key_values(text: &str) -> Result<Pairs, DbError> {
    let mut pairs = Pairs::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(DbError::invalid_target(format!(
                "missing \"=\" after \"{key}\" in the connection string"
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                    None => {
                        return Err(DbError::invalid_target(format!(
                            "unterminated quoted value for \"{key}\" in the connection string"
                        )))
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        pairs.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(pairs: &'a Pairs, key: &str) -> Option<&'a str> {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn full_uri() {
        let p = parse("postgresql://al%40ice:p%3Aw@db.example:6543/my%20db?sslmode=require&application_name=x")
            .unwrap();
        assert_eq!(get(&p, "user"), Some("al@ice"));
        assert_eq!(get(&p, "password"), Some("p:w"));
        assert_eq!(get(&p, "host"), Some("db.example"));
        assert_eq!(get(&p, "port"), Some("6543"));
        assert_eq!(get(&p, "dbname"), Some("my db"));
        assert_eq!(get(&p, "sslmode"), Some("require"));
        assert_eq!(get(&p, "application_name"), Some("x"));
    }

    #[test]
    fn password_with_raw_at_sign() {
        let p = parse("postgres://u:a@b@h/d").unwrap();
        assert_eq!(get(&p, "password"), Some("a@b"));
        assert_eq!(get(&p, "host"), Some("h"));
    }

    #[test]
    fn encoded_socket_dir_and_ipv6() {
        let p = parse("postgresql://%2Fvar%2Frun%2Fpostgresql:5433/db").unwrap();
        assert_eq!(get(&p, "host"), Some("/var/run/postgresql"));
        assert_eq!(get(&p, "port"), Some("5433"));
        let p = parse("postgresql://[::1]:5000/db").unwrap();
        assert_eq!(get(&p, "host"), Some("::1"));
        assert_eq!(get(&p, "port"), Some("5000"));
        let p = parse("postgresql:///db?host=/tmp/sock&port=7").unwrap();
        assert_eq!(get(&p, "host"), Some("/tmp/sock"));
        assert_eq!(get(&p, "dbname"), Some("db"));
    }

    #[test]
    fn empty_parts() {
        assert!(parse("postgresql://").unwrap().is_empty());
        assert!(parse("").unwrap().is_empty());
        let p = parse("postgresql://user@").unwrap();
        assert_eq!(p, vec![("user".to_string(), "user".to_string())]);
    }

    #[test]
    fn key_values() {
        let p =
            parse("host=/var/run/postgresql dbname = x user=y password='it''s' sslmode=disable")
                .unwrap_err();
        assert!(p.message.contains("missing \"=\""), "{}", p.message);
        let p =
            parse(r"host=/var/run/postgresql dbname = x user=y password='it\'s a \\ pw'").unwrap();
        assert_eq!(get(&p, "host"), Some("/var/run/postgresql"));
        assert_eq!(get(&p, "dbname"), Some("x"));
        assert_eq!(get(&p, "user"), Some("y"));
        assert_eq!(get(&p, "password"), Some(r"it's a \ pw"));
    }

    #[test]
    fn a_host_list_becomes_host_and_port_lists() {
        let p = parse("postgresql://u@h1:5432,h2,[::1]:7/db").unwrap();
        assert_eq!(get(&p, "host"), Some("h1,h2,::1"));
        assert_eq!(get(&p, "port"), Some("5432,,7"));
        let p = parse("postgresql://u@a,b/db").unwrap();
        assert_eq!((get(&p, "host"), get(&p, "port")), (Some("a,b"), None));
    }

    #[test]
    fn malformed() {
        for bad in [
            "mysql://root@h/db",
            "just-a-host",
            "host='unterminated",
            "postgresql://h/db?sslmode",
            "postgresql://[::1/db",
            "postgresql://h/%ff",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.is_invalid_target(), "{bad}");
            assert!(!err.message.contains('\n'), "{bad}");
        }
    }
}
