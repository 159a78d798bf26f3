import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PUBLIC_ROUTE, REQUIRED_SCOPES } from '../identity/auth.decorators';

export interface RouteAccess {
  public: boolean;
  scopes: readonly string[];
}

const asList = (value: string | string[] | undefined): string[] => (Array.isArray(value) ? value : [value ?? '']);

/** `v1/keys` + `:key_id/rotate` → `/v1/keys/{key_id}/rotate`, as the document writes paths. */
function documentPath(prefix: string, path: string): string {
  const joined = `/${[prefix, path].map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;
  return joined.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Who may call each route, by `METHOD /path`: read from the same @Public and @RequireScopes
 * metadata the guards read, so a route another module adds is described without edits here.
 */
export function routeAccess(discovery: DiscoveryService, scanner: MetadataScanner, reflector: Reflector): Map<string, RouteAccess> {
  const routes = new Map<string, RouteAccess>();
  for (const wrapper of discovery.getControllers()) {
    const { instance, metatype } = wrapper;
    if (!instance || !metatype) continue;
    const prototype = Object.getPrototypeOf(instance);
    for (const methodName of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[methodName];
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const targets = [handler, metatype];
      const access = {
        public: reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) ?? false,
        scopes: reflector.getAllAndOverride<string[]>(REQUIRED_SCOPES, targets) ?? [],
      };
      for (const prefix of asList(Reflect.getMetadata(PATH_METADATA, metatype))) {
        for (const path of asList(Reflect.getMetadata(PATH_METADATA, handler))) {
          routes.set(`${RequestMethod[method]} ${documentPath(prefix, path)}`, access);
        }
      }
    }
  }
  return routes;
}
