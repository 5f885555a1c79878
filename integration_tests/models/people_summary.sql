select
    name is not null as has_name,
    count(*) as people,
    sum(score) as total_score
from {{ ref('engine_people') }}
group by 1
