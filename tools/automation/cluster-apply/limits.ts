/** Objects one cluster-apply call applies; the definition states it, so it lives apart from the YAML parser. */
export const MAX_OBJECTS = 200;
