-- About how many requests the notices will list, before the lists are made: the exposed
-- responses and the (exposed, owner) pairs of `data_owners` (more than its owner requests).
SELECT
    (SELECT count(*) FROM bands WHERE band = 'exposed')
    + (SELECT count(*) FROM data_owners) AS listed
