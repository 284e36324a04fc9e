-- Quickstart: a bounded datagen source, a filter and a projection, printed as Flink's
-- SQL client prints a streaming result.
SET 'sql-client.execution.result-mode' = 'tableau';
SET 'table.local-time-zone' = 'UTC';

CREATE TABLE orders (
  order_id BIGINT,
  amount   DECIMAL(10, 2),
  product  STRING
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10',
  'fields.order_id.kind' = 'sequence',
  'fields.order_id.start' = '1',
  'fields.order_id.end' = '10',
  'fields.amount.min' = '1',
  'fields.amount.max' = '100',
  'fields.product.length' = '6'
);

SELECT order_id, amount, UPPER(product) AS product, amount > 50 AS big
FROM orders
WHERE MOD(order_id, 2) = 0;
