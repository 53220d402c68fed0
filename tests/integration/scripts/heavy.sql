INSERT INTO script_log VALUES (':tool', :client_id, 'heavy', 1);
