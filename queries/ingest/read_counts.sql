-- Records read per input of the run (`_ing_src`: __row = input index * $stride + row).
SELECT __row // $stride AS inp, count(*) AS records
FROM _ing_src
GROUP BY 1
