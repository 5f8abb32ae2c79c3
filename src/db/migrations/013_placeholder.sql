-- Number 013 is the executed value of orders (docs/API.md 5.1 `executedQuote`); this file holds its
-- place so that the numbers stay without gaps until that migration replaces it.
SELECT 1;
