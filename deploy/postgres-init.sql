-- Prefect server's database, beside the kbflow manifest database (POSTGRES_DB).
CREATE DATABASE prefect OWNER kbflow;
