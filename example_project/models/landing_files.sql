{#-- The landing folder's JSON files as a directory table: one row per file, one commit per run
     that finds a file added, replaced or removed. --#}
{{ config(materialized='directory_table', meta={'location': 'landing', 'include': ['*.json']}) }}
