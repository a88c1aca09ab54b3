-- A file's parts compressed with lz4 (they were stored EXTERNAL, uncompressed, since 0013). A long
-- export writes about 4 KB of CSV per response, which lz4 shrinks severalfold: PostgreSQL then
-- writes a fraction of the TOAST rows and WAL, which saves it more CPU than lz4 costs (a long export
-- of 100,000 responses: see docs/benchmarks.md, Exports). gzip parts do not compress again and are
-- kept as they are. pglz is not used: on the same parts it cost more than storing them uncompressed.
-- Only parts written from now on are compressed; existing ones are read as they are. octet_length
-- (a file's size, the parts to read) reads the length from the TOAST pointer, without decompressing.
--
-- A server built without lz4 refuses the COMPRESSION clause (feature_not_supported): the block then
-- leaves the column as it was (EXTERNAL, uncompressed) and the migration still succeeds.
DO $$
BEGIN
  ALTER TABLE "stored_file_parts" ALTER COLUMN "data" SET COMPRESSION lz4;
  ALTER TABLE "stored_file_parts" ALTER COLUMN "data" SET STORAGE EXTENDED;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'stored_file_parts.data left uncompressed: %', SQLERRM;
END
$$;
