INSERT INTO script_log VALUES (':tool', :client_id, 'light', 1);
