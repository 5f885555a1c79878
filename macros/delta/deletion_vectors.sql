{#-- Deletion vectors read from their own bytes (docs/architecture.md, "Three ways to read
     changes"): the row positions a vector marks, so that a commit which changed a file's vector is
     read as the file's rows at the positions its new vector marks and its old one did not, by the
     file's path, with no time travel. Delta's format: the log's descriptor says where the bytes
     are (storageType 'u': in `deletion_vector_<uuid>.bin` under the table, the uuid Z85-encoded
     at the end of pathOrInlineDv after an optional directory prefix, the bytes at `offset` after
     a 4-byte size; 'i': inline, Z85-encoded); the bytes are a 4-byte magic number and a
     RoaringBitmapArray in the portable format (a 64-bit count of bitmaps, then each one's 32-bit
     key and a Roaring bitmap as the RoaringFormatSpec lays it out), all little-endian. --#}


{#-- The most rows the vectors a window decodes may mark together: decoding runs in Jinja at
     compile time (about 6 s for this many). The rows a vector marks are every delete of its file
     until a purge, not the window's, so the limit is set by what a window past it costs: read by
     time travel, 70-100 s on 10M rows (docs/architecture.md). --#}
{% macro deletion_vector_decode_limit() %}
  {{ return(1000000) }}
{% endmacro %}


{#-- Z85 (the ZeroMQ base-85 alphabet, 4-byte blocks as 5 characters) decoded, as hex digits. --#}
{% macro z85_decoded_hex(text) %}
  {%- set alphabet = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#' -%}
  {%- set blocks = [] -%}
  {%- for start in range(0, text | length, 5) -%}
    {%- set block = namespace(value=0) -%}
    {%- for character in text[start:start + 5] -%}
      {%- set block.value = block.value * 85 + alphabet.index(character) -%}
    {%- endfor -%}
    {%- do blocks.append('%08x' | format(block.value)) -%}
  {%- endfor -%}
  {{ return(blocks | join('')) }}
{% endmacro %}


{#-- The file that holds a vector stored beside the data ('u'), relative to the table's location;
     none for any other storage. --#}
{% macro deletion_vector_file(vector) %}
  {%- if vector.storageType != 'u' or (vector.pathOrInlineDv | length) < 20 -%}{{ return(none) }}{%- endif -%}
  {%- set encoded = vector.pathOrInlineDv -%}
  {%- set prefix = encoded[:encoded | length - 20] -%}
  {%- set digits = dbt_tablestream.z85_decoded_hex(encoded[encoded | length - 20:]) -%}
  {%- set uuid = [digits[0:8], digits[8:12], digits[12:16], digits[16:20], digits[20:32]] | join('-') -%}
  {{ return((prefix ~ '/' if prefix else '') ~ 'deletion_vector_' ~ uuid ~ '.bin') }}
{% endmacro %}


{#-- The unsigned little-endian integer of `size` bytes at byte `offset` of `digits` (hex). --#}
{% macro little_endian(digits, offset, size) %}
  {%- set reversed = [] -%}
  {%- for byte in range(offset + size - 1, offset - 1, -1) -%}{%- do reversed.append(digits[byte * 2:byte * 2 + 2]) -%}{%- endfor -%}
  {{ return(reversed | join('') | int(base=16)) }}
{% endmacro %}


{#-- The row positions a serialized vector (hex digits, from its magic number on) marks, in
     order; none where the bytes are not the portable RoaringBitmapArray this reads. --#}
{% macro deletion_vector_positions(digits) %}
  {%- if (digits | length) < 24 or dbt_tablestream.little_endian(digits, 0, 4) != 1681511377 -%}{{ return(none) }}{%- endif -%}
  {%- set positions = [] -%}
  {%- set read = namespace(cursor=12) -%}
  {%- for _ in range(dbt_tablestream.little_endian(digits, 4, 8)) -%}
    {%- set high = dbt_tablestream.little_endian(digits, read.cursor, 4) * 4294967296 -%}
    {%- set bitmap = dbt_tablestream.roaring_bitmap_positions(digits, read.cursor + 4, high) -%}
    {%- if bitmap is none -%}{{ return(none) }}{%- endif -%}
    {%- do positions.extend(bitmap.positions) -%}
    {%- set read.cursor = bitmap.end -%}
  {%- endfor -%}
  {{ return(positions) }}
{% endmacro %}


{#-- One 32-bit Roaring bitmap at byte `start` of `digits`, each value plus `high`: {positions,
     end (the byte after it)}; none for a cookie this does not know. Its containers are arrays of
     16-bit values, bitmaps of 65,536 bits, or runs (start, length - 1). A 16-bit value is read
     inline rather than through little_endian: a macro call per value would cost more than the
     value. --#}
{% macro roaring_bitmap_positions(digits, start, high) %}
  {%- set read = namespace(cursor=start + 4, runs=none, size=0) -%}
  {%- set cookie = dbt_tablestream.little_endian(digits, start, 4) -%}
  {%- if cookie % 65536 == 12347 -%}
    {%- set read.size = cookie // 65536 + 1 -%}
    {%- set read.runs = digits[read.cursor * 2:(read.cursor + (read.size + 7) // 8) * 2] -%}
    {%- set read.cursor = read.cursor + (read.size + 7) // 8 -%}
  {%- elif cookie == 12346 -%}
    {%- set read.size = dbt_tablestream.little_endian(digits, read.cursor, 4) -%}
    {%- set read.cursor = read.cursor + 4 -%}
  {%- else -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set containers = [] -%}
  {%- for index in range(read.size) -%}
    {%- set at = (read.cursor + index * 4) * 2 -%}
    {%- do containers.append({'base': high + (digits[at + 2:at + 4] ~ digits[at:at + 2]) | int(base=16) * 65536,
        'cardinality': (digits[at + 6:at + 8] ~ digits[at + 4:at + 6]) | int(base=16) + 1}) -%}
  {%- endfor -%}
  {%- set read.cursor = read.cursor + read.size * 4 + (read.size * 4 if read.runs is none or read.size >= 4 else 0) -%}
  {%- set positions = [] -%}
  {%- for container in containers -%}
    {%- set index = loop.index0 -%}
    {%- set base = container.base -%}
    {%- if read.runs is not none and (read.runs[(index // 8) * 2:(index // 8) * 2 + 2] | int(base=16)) // (2 ** (index % 8)) % 2 == 1 -%}
      {%- set count = dbt_tablestream.little_endian(digits, read.cursor, 2) -%}
      {%- for run in range(count) -%}
        {%- set at = (read.cursor + 2 + run * 4) * 2 -%}
        {%- set first = (digits[at + 2:at + 4] ~ digits[at:at + 2]) | int(base=16) -%}
        {%- set length = (digits[at + 6:at + 8] ~ digits[at + 4:at + 6]) | int(base=16) -%}
        {%- do positions.extend(range(base + first, base + first + length + 1)) -%}
      {%- endfor -%}
      {%- set read.cursor = read.cursor + 2 + count * 4 -%}
    {%- elif container.cardinality <= 4096 -%}
      {%- for value in range(container.cardinality) -%}
        {%- set at = (read.cursor + value * 2) * 2 -%}
        {%- do positions.append(base + (digits[at + 2:at + 4] ~ digits[at:at + 2]) | int(base=16)) -%}
      {%- endfor -%}
      {%- set read.cursor = read.cursor + container.cardinality * 2 -%}
    {%- else -%}
      {%- for byte in range(8192) -%}
        {%- set value = digits[(read.cursor + byte) * 2:(read.cursor + byte) * 2 + 2] | int(base=16) -%}
        {%- for bit in range(8) if value // (2 ** bit) % 2 == 1 -%}
          {%- do positions.append(base + byte * 8 + bit) -%}
        {%- endfor -%}
      {%- endfor -%}
      {%- set read.cursor = read.cursor + 8192 -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return({'positions': positions, 'end': read.cursor}) }}
{% endmacro %}


{% macro delta_log_decode_vectors(stream, commits) %}
  {{ return(adapter.dispatch('delta_log_decode_vectors', 'dbt_tablestream')(stream, commits)) }}
{% endmacro %}


{#-- Gives every file entry of `commits` whose vector the commit changed (removed and added again
     under one path) `positions`, the row positions its vector marks ([] for no vector), where all
     of the window's such vectors can be read so: stored beside the data or inline, in the portable
     format, marking at most deletion_vector_decode_limit() rows together, each decoded to as many
     positions as the log says it marks. Else none gets them, and those commits are read by time
     travel (delta_log_vector_changes_sql); so under column mapping, where a file read by its path
     names its columns by their physical names, nothing is decoded. One query reads every stored
     vector's bytes. --#}
{% macro spark__delta_log_decode_vectors(stream, commits) %}
  {%- if stream.files.column_mapping not in [none, 'none'] -%}{{ return(none) }}{%- endif -%}
  {%- set entries = [] -%}
  {%- for commit in commits -%}
    {%- do entries.extend((commit.removes + commit.adds) | selectattr('path', 'in', dbt_tablestream.delta_log_revectored_paths(commit))) -%}
  {%- endfor -%}
  {%- set marked = namespace(rows=0) -%}
  {#-- Entry index -> {file, name, start} of a vector stored beside the data. --#}
  {%- set stored = {} -%}
  {%- for entry in entries -%}
    {%- set marked.rows = marked.rows + (entry.vector.cardinality | int if entry.vector else 0) -%}
    {%- if not entry.vector -%}
    {%- elif entry.vector.storageType == 'u' -%}
      {%- set file = dbt_tablestream.deletion_vector_file(entry.vector) -%}
      {%- if file is none -%}{{ return(none) }}{%- endif -%}
      {#-- The bytes start after the 4-byte size at `offset` (SQL's substring counts from 1). --#}
      {%- do stored.update({loop.index0: {'file': file, 'name': file.split('/')[-1], 'start': (entry.vector.offset or 0) | int + 5}}) -%}
    {%- elif entry.vector.storageType != 'i' -%}
      {{ return(none) }}
    {%- endif -%}
  {%- endfor -%}
  {%- if not entries or marked.rows > dbt_tablestream.deletion_vector_decode_limit() -%}{{ return(none) }}{%- endif -%}
  {%- set bytes = {} -%}
  {%- if stored -%}
    {%- set directories = {} -%}
    {%- for index, place in stored.items() -%}
      {%- set read = directories.setdefault(place.file[:place.file | length - place.name | length], {'names': [], 'ranges': []}) -%}
      {%- if place.name not in read.names -%}{%- do read.names.append(place.name) -%}{%- endif -%}
      {%- do read.ranges.append('(' ~ dbt_tablestream.sql_string(place.name) ~ ', ' ~ place.start ~ ', '
          ~ entries[index].vector.sizeInBytes | int ~ ')') -%}
    {%- endfor -%}
    {%- set selects = [] -%}
    {%- for directory, read in directories.items() -%}
      {%- set leaf = read.names[0] if read.names | length == 1 else '{' ~ read.names | join(',') ~ '}' -%}
      {%- do selects.append('select __tablestream_vector.name, __tablestream_vector.start, hex(substring(__tablestream_file.content, '
          ~ '__tablestream_vector.start, __tablestream_vector.size)) as bytes\nfrom binaryFile.`' ~ stream.files.location.rstrip('/') ~ '/'
          ~ directory ~ leaf ~ '` as __tablestream_file\njoin (values ' ~ read.ranges | unique | join(', ')
          ~ ') as __tablestream_vector(name, start, size)\n  on __tablestream_file._metadata.file_name = __tablestream_vector.name') -%}
    {%- endfor -%}
    {%- for row in run_query(selects | join('\nunion all\n')).rows -%}
      {%- do bytes.update({row['name'] ~ '@' ~ row['start']: row['bytes']}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set decoded = [] -%}
  {%- for entry in entries -%}
    {%- set vector = entry.vector -%}
    {%- if not vector -%}
      {%- set positions = [] -%}
    {%- elif vector.storageType == 'i' -%}
      {%- set positions = dbt_tablestream.deletion_vector_positions(dbt_tablestream.z85_decoded_hex(vector.pathOrInlineDv)[:vector.sizeInBytes | int * 2]) -%}
    {%- else -%}
      {%- set key = stored[loop.index0].name ~ '@' ~ stored[loop.index0].start -%}
      {%- set positions = dbt_tablestream.deletion_vector_positions(bytes[key]) if bytes.get(key) else none -%}
    {%- endif -%}
    {%- if positions is none or (vector and positions | length != vector.cardinality | int) -%}{{ return(none) }}{%- endif -%}
    {%- do decoded.append(positions) -%}
  {%- endfor -%}
  {%- for entry in entries -%}{%- do entry.update({'positions': decoded[loop.index0]}) -%}{%- endfor -%}
{% endmacro %}
