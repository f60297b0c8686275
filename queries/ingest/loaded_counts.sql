-- Records loaded per input of the run (`_ing_loaded`, the rows the direct load added).
SELECT __row // $stride AS inp, count(*) AS records
FROM _ing_loaded
GROUP BY 1
