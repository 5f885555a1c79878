{#-- The CRM's nightly full export: exports/customers.json (JSON lines), replaced whole every night.
     A view over the file: no change feed, no history, only tonight's rows. --#}
{%- set folder = adapter.project_root() ~ '/exports' if execute and adapter.type() == 'tablestream' else var('example_exports', 'exports') -%}
select cast(customer_id as bigint) as customer_id, name, segment
from json.`{{ folder }}/customers.json`
