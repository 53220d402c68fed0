-- Runs under pgbench and dbscale alike: every branch is decided by the client id, the values by
-- pgbench's specified functions, so both tools insert the same rows for the same -c and -t.
\set c :client_id
\set k random(1, 1000)
\set p permute(:k, 1000, 7)
\set h hash_fnv1a(:k, 5)
SELECT :p AS perm, :h AS h \gset chk_
\if :chk_perm = permute(:k, 1000, 7) and :chk_h = hash_fnv1a(:k, 5)
  INSERT INTO script_log VALUES (':tool', :c, 'gset-ok', 1);
\else
  INSERT INTO script_log VALUES (':tool', :c, 'gset-bad', 1);
\endif
\if :c % 2 = 0
  INSERT INTO script_log VALUES (':tool', :c, 'even', :c);
\elif :c = 1
  INSERT INTO script_log VALUES (':tool', :c, 'one', :c);
\else
  INSERT INTO script_log VALUES (':tool', :c, 'odd', :c);
\endif
SELECT 1 AS a \; SELECT 2 AS b \aset x_
INSERT INTO script_log VALUES (':tool', :c, 'aset', :x_a + :x_b);
\set w 5 * \
  (2 + 1)
\sleep 0 ms
\setshell s echo :w
\shell true
INSERT INTO script_log VALUES (':tool', :c, 'shell', :s);
INSERT INTO script_log VALUES (':tool', :c, 'scale', :scale);
