CREATE OR REPLACE VIEW exposed AS SELECT * FROM bands WHERE band = 'exposed'
