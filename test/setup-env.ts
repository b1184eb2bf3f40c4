// Every test runs in UTC so that dates print the same on every machine.
process.env.TZ = 'UTC';
