-- Pipeline mode (extended or prepared protocol only): the statements between \startpipeline and
-- \endpipeline go to the server together. Values are bound, so :tool is not quoted here.
\set c :client_id
\set tens :c * 10
\startpipeline
INSERT INTO script_log VALUES (:tool, :c, 'piped', 1);
INSERT INTO script_log VALUES (:tool, :c, 'piped', 2);
\endpipeline
INSERT INTO script_log VALUES (:tool, :c, 'after', :tens);
