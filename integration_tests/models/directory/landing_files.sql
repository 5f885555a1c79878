{#-- The files under var integration_directory, listed each run; left out when it is unset (a
     Databricks SQL warehouse, or any profile that cannot write a folder with SQL). --#}
{{ config(
    materialized='directory_table',
    location=var('integration_directory', 'unset'),
    include=['*.json'],
    enabled=var('integration_directory', none) is not none,
) }}
