/** A secret's name: what the API, the CLI and ctx.secrets accept. Its own module so the CLI can check names without loading the database. */
export const SECRET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
