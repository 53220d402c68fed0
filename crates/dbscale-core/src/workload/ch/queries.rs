//! The 22 CH-benCHmark queries (Cole et al., 2011): TPC-H's questions asked of TPC-C's tables
//! plus SUPPLIER, NATION and REGION, in SQL PostgreSQL and MySQL/MariaDB both take. A stock row
//! belongs to supplier `(s_w_id * s_i_id) mod 10000`, a customer to nation `ascii(first letter of
//! c_state) - 65`. Where the published text has known faults they are mended: Q3 matches states
//! beginning with `A` (the loaders write upper-case states, so the paper's `a%` matches nothing
//! on a case-sensitive collation), Q8 carries no MySQL-only comment line, Q18 names its columns.

/// The view Q15 reads (created by `prepare`, dropped by `cleanup`).
pub const REVENUE_VIEW: &str = "CREATE VIEW revenue1 (supplier_no, total_revenue) AS \
     SELECT mod((s_w_id * s_i_id), 10000) AS supplier_no, sum(ol_amount) AS total_revenue \
     FROM order_line, stock \
     WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id \
       AND ol_delivery_d >= '2007-01-02 00:00:00' \
     GROUP BY mod((s_w_id * s_i_id), 10000)";

/// The text of query `number` (1 to 22).
pub fn query(number: usize) -> &'static str {
    QUERIES[number - 1]
}

const QUERIES: [&str; 22] = [
    // Q1: pricing summary by order-line number
    "SELECT ol_number, sum(ol_quantity) AS sum_qty, sum(ol_amount) AS sum_amount, \
       avg(ol_quantity) AS avg_qty, avg(ol_amount) AS avg_amount, count(*) AS count_order \
     FROM order_line WHERE ol_delivery_d > '2007-01-02 00:00:00' \
     GROUP BY ol_number ORDER BY ol_number",
    // Q2: minimum-cost supplier in Europe
    "SELECT s_suppkey, s_name, n_name, i_id, i_name, s_address, s_phone, s_comment \
     FROM item, supplier, stock, nation, region, \
       (SELECT s_i_id AS m_i_id, min(s_quantity) AS m_s_quantity \
        FROM stock, supplier, nation, region \
        WHERE mod((s_w_id * s_i_id), 10000) = s_suppkey AND s_nationkey = n_nationkey \
          AND n_regionkey = r_regionkey AND r_name LIKE 'EUROP%' \
        GROUP BY s_i_id) m \
     WHERE i_id = s_i_id AND mod((s_w_id * s_i_id), 10000) = s_suppkey \
       AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND i_data LIKE '%b' \
       AND r_name LIKE 'EUROP%' AND i_id = m_i_id AND s_quantity = m_s_quantity \
     ORDER BY n_name, s_name, i_id",
    // Q3: shipping priority of undelivered orders
    "SELECT ol_o_id, ol_w_id, ol_d_id, sum(ol_amount) AS revenue, o_entry_d \
     FROM customer, new_order, orders, order_line \
     WHERE c_state LIKE 'A%' AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
       AND no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
       AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
       AND o_entry_d > '2007-01-02 00:00:00' \
     GROUP BY ol_o_id, ol_w_id, ol_d_id, o_entry_d \
     ORDER BY revenue DESC, o_entry_d",
    // Q4: order priority checking
    "SELECT o_ol_cnt, count(*) AS order_count FROM orders \
     WHERE o_entry_d >= '2007-01-02 00:00:00' AND o_entry_d < '2032-01-02 00:00:00' \
       AND EXISTS (SELECT * FROM order_line WHERE o_id = ol_o_id AND o_w_id = ol_w_id \
                   AND o_d_id = ol_d_id AND ol_delivery_d >= o_entry_d) \
     GROUP BY o_ol_cnt ORDER BY o_ol_cnt",
    // Q5: local supplier volume in Europe
    "SELECT n_name, sum(ol_amount) AS revenue \
     FROM customer, orders, order_line, stock, supplier, nation, region \
     WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
       AND ol_o_id = o_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id \
       AND ol_w_id = s_w_id AND ol_i_id = s_i_id \
       AND mod((s_w_id * s_i_id), 10000) = s_suppkey \
       AND ascii(substr(c_state, 1, 1)) - 65 = s_nationkey \
       AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE' \
       AND o_entry_d >= '2007-01-02 00:00:00' \
     GROUP BY n_name ORDER BY revenue DESC",
    // Q6: forecasting revenue change
    "SELECT sum(ol_amount) AS revenue FROM order_line \
     WHERE ol_delivery_d >= '1999-01-01 00:00:00' AND ol_delivery_d < '2030-01-01 00:00:00' \
       AND ol_quantity BETWEEN 1 AND 100000",
    // Q7: volume shipping between Japan and China
    "SELECT s_nationkey AS supp_nation, substr(c_state, 1, 1) AS cust_nation, \
       extract(year FROM o_entry_d) AS l_year, sum(ol_amount) AS revenue \
     FROM supplier, stock, order_line, orders, customer, nation n1, nation n2 \
     WHERE ol_supply_w_id = s_w_id AND ol_i_id = s_i_id \
       AND mod((s_w_id * s_i_id), 10000) = s_suppkey \
       AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
       AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
       AND s_nationkey = n1.n_nationkey \
       AND ascii(substr(c_state, 1, 1)) - 65 = n2.n_nationkey \
       AND ((n1.n_name = 'JAPAN' AND n2.n_name = 'CHINA') \
            OR (n1.n_name = 'CHINA' AND n2.n_name = 'JAPAN')) \
       AND ol_delivery_d BETWEEN '2007-01-02 00:00:00' AND '2032-01-02 00:00:00' \
     GROUP BY s_nationkey, substr(c_state, 1, 1), extract(year FROM o_entry_d) \
     ORDER BY s_nationkey, cust_nation, l_year",
    // Q8: India's market share in Asia
    "SELECT extract(year FROM o_entry_d) AS l_year, \
       sum(CASE WHEN n2.n_name = 'INDIA' THEN ol_amount ELSE 0 END) / sum(ol_amount) \
         AS mkt_share \
     FROM item, supplier, stock, order_line, orders, customer, nation n1, nation n2, region \
     WHERE i_id = s_i_id AND ol_i_id = s_i_id AND ol_supply_w_id = s_w_id \
       AND mod((s_w_id * s_i_id), 10000) = s_suppkey \
       AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
       AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
       AND n1.n_nationkey = ascii(substr(c_state, 1, 1)) - 65 \
       AND n1.n_regionkey = r_regionkey AND ol_i_id < 1000 AND r_name = 'ASIA' \
       AND s_nationkey = n2.n_nationkey \
       AND o_entry_d BETWEEN '2007-01-02 00:00:00' AND '2032-01-02 00:00:00' \
       AND i_id = ol_i_id \
     GROUP BY extract(year FROM o_entry_d) ORDER BY l_year",
    // Q9: product type profit by nation
    "SELECT n_name, extract(year FROM o_entry_d) AS l_year, sum(ol_amount) AS sum_profit \
     FROM item, stock, supplier, order_line, orders, nation \
     WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id \
       AND mod((s_w_id * s_i_id), 10000) = s_suppkey \
       AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_i_id = i_id \
       AND s_nationkey = n_nationkey AND i_data LIKE '%BB' \
     GROUP BY n_name, extract(year FROM o_entry_d) \
     ORDER BY n_name, l_year DESC",
    // Q10: returned item reporting
    "SELECT c_id, c_last, sum(ol_amount) AS revenue, c_city, c_phone, n_name \
     FROM customer, orders, order_line, nation \
     WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
       AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
       AND o_entry_d >= '2007-01-02 00:00:00' AND o_entry_d <= ol_delivery_d \
       AND n_nationkey = ascii(substr(c_state, 1, 1)) - 65 \
     GROUP BY c_id, c_last, c_city, c_phone, n_name \
     ORDER BY revenue DESC",
    // Q11: important stock in Germany
    "SELECT s_i_id, sum(s_order_cnt) AS ordercount \
     FROM stock, supplier, nation \
     WHERE mod((s_w_id * s_i_id), 10000) = s_suppkey AND s_nationkey = n_nationkey \
       AND n_name = 'GERMANY' \
     GROUP BY s_i_id \
     HAVING sum(s_order_cnt) > \
       (SELECT sum(s_order_cnt) * 0.005 FROM stock, supplier, nation \
        WHERE mod((s_w_id * s_i_id), 10000) = s_suppkey AND s_nationkey = n_nationkey \
          AND n_name = 'GERMANY') \
     ORDER BY ordercount DESC",
    // Q12: shipping modes and order priority
    "SELECT o_ol_cnt, \
       sum(CASE WHEN o_carrier_id = 1 OR o_carrier_id = 2 THEN 1 ELSE 0 END) \
         AS high_line_count, \
       sum(CASE WHEN o_carrier_id <> 1 AND o_carrier_id <> 2 THEN 1 ELSE 0 END) \
         AS low_line_count \
     FROM orders, order_line \
     WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
       AND o_entry_d <= ol_delivery_d AND ol_delivery_d < '2030-01-01 00:00:00' \
     GROUP BY o_ol_cnt ORDER BY o_ol_cnt",
    // Q13: customer distribution
    "SELECT c_count, count(*) AS custdist \
     FROM (SELECT c_id, count(o_id) AS c_count \
           FROM customer LEFT OUTER JOIN orders ON \
             (c_w_id = o_w_id AND c_d_id = o_d_id AND c_id = o_c_id AND o_carrier_id > 8) \
           GROUP BY c_id) AS c_orders \
     GROUP BY c_count ORDER BY custdist DESC, c_count DESC",
    // Q14: promotion effect
    "SELECT 100.00 * sum(CASE WHEN i_data LIKE 'PR%' THEN ol_amount ELSE 0 END) \
       / (1 + sum(ol_amount)) AS promo_revenue \
     FROM order_line, item \
     WHERE ol_i_id = i_id AND ol_delivery_d >= '2007-01-02 00:00:00' \
       AND ol_delivery_d < '2030-01-02 00:00:00'",
    // Q15: top supplier
    "SELECT s_suppkey, s_name, s_address, s_phone, total_revenue \
     FROM supplier, revenue1 \
     WHERE s_suppkey = supplier_no \
       AND total_revenue = (SELECT max(total_revenue) FROM revenue1) \
     ORDER BY s_suppkey",
    // Q16: parts/supplier relationship
    "SELECT i_name, substr(i_data, 1, 3) AS brand, i_price, \
       count(DISTINCT mod((s_w_id * s_i_id), 10000)) AS supplier_cnt \
     FROM stock, item \
     WHERE i_id = s_i_id AND i_data NOT LIKE 'zz%' \
       AND mod((s_w_id * s_i_id), 10000) NOT IN \
         (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%bad%') \
     GROUP BY i_name, substr(i_data, 1, 3), i_price \
     ORDER BY supplier_cnt DESC",
    // Q17: small-quantity-order revenue
    "SELECT sum(ol_amount) / 2.0 AS avg_yearly \
     FROM order_line, \
       (SELECT i_id, avg(ol_quantity) AS a FROM item, order_line \
        WHERE i_data LIKE '%b' AND ol_i_id = i_id GROUP BY i_id) t \
     WHERE ol_i_id = t.i_id AND ol_quantity < t.a",
    // Q18: large volume customer
    "SELECT c_last, c_id, o_id, o_entry_d, o_ol_cnt, sum(ol_amount) AS amount \
     FROM customer, orders, order_line \
     WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id \
       AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
     GROUP BY o_id, o_w_id, o_d_id, c_id, c_last, o_entry_d, o_ol_cnt \
     HAVING sum(ol_amount) > 200 \
     ORDER BY amount DESC, o_entry_d",
    // Q19: discounted revenue
    "SELECT sum(ol_amount) AS revenue FROM order_line, item \
     WHERE (ol_i_id = i_id AND i_data LIKE '%a' AND ol_quantity >= 1 AND ol_quantity <= 10 \
            AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 3)) \
        OR (ol_i_id = i_id AND i_data LIKE '%b' AND ol_quantity >= 1 AND ol_quantity <= 10 \
            AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 4)) \
        OR (ol_i_id = i_id AND i_data LIKE '%c' AND ol_quantity >= 1 AND ol_quantity <= 10 \
            AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 5, 3))",
    // Q20: potential part promotion
    "SELECT s_name, s_address FROM supplier, nation \
     WHERE s_suppkey IN \
         (SELECT mod(s_i_id * s_w_id, 10000) FROM stock, order_line \
          WHERE s_i_id IN (SELECT i_id FROM item WHERE i_data LIKE 'co%') \
            AND ol_i_id = s_i_id AND ol_delivery_d > '2010-05-23 12:00:00' \
          GROUP BY s_i_id, s_w_id, s_quantity \
          HAVING 2 * s_quantity > sum(ol_quantity)) \
       AND s_nationkey = n_nationkey AND n_name = 'GERMANY' \
     ORDER BY s_name",
    // Q21: suppliers who kept orders waiting
    "SELECT s_name, count(*) AS numwait \
     FROM supplier, order_line l1, orders, stock, nation \
     WHERE ol_o_id = o_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id \
       AND ol_w_id = s_w_id AND ol_i_id = s_i_id \
       AND mod((s_w_id * s_i_id), 10000) = s_suppkey \
       AND l1.ol_delivery_d > o_entry_d \
       AND NOT EXISTS (SELECT * FROM order_line l2 \
                       WHERE l2.ol_o_id = l1.ol_o_id AND l2.ol_w_id = l1.ol_w_id \
                         AND l2.ol_d_id = l1.ol_d_id \
                         AND l2.ol_delivery_d > l1.ol_delivery_d) \
       AND s_nationkey = n_nationkey AND n_name = 'GERMANY' \
     GROUP BY s_name ORDER BY numwait DESC, s_name",
    // Q22: global sales opportunity
    "SELECT substr(c_state, 1, 1) AS country, count(*) AS numcust, \
       sum(c_balance) AS totacctbal \
     FROM customer \
     WHERE substr(c_phone, 1, 1) IN ('1', '2', '3', '4', '5', '6', '7') \
       AND c_balance > (SELECT avg(c_balance) FROM customer \
                        WHERE c_balance > 0.00 \
                          AND substr(c_phone, 1, 1) IN ('1', '2', '3', '4', '5', '6', '7')) \
       AND NOT EXISTS (SELECT * FROM orders \
                       WHERE o_c_id = c_id AND o_w_id = c_w_id AND o_d_id = c_d_id) \
     GROUP BY substr(c_state, 1, 1) ORDER BY substr(c_state, 1, 1)",
];
