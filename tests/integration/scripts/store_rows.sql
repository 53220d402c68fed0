-- What \aset keeps from a result of several rows (pgbench: the last), what a NULL becomes in a
-- stored variable (pgbench: empty text), and \sleep with its unit glued to the number.
\set c :client_id
SELECT g AS v FROM generate_series(1, 3) AS g \; SELECT 10 * g AS w FROM generate_series(1, 2) AS g \aset
INSERT INTO script_log VALUES (':tool', :c, 'aset-rows', :v + :w);
SELECT NULL AS n \gset
INSERT INTO script_log VALUES (':tool', :c, 'null-gset', length(':n'));
\sleep 1ms
\set half 1.5
\sleep :half us
INSERT INTO script_log VALUES (':tool', :c, 'slept', 1);
