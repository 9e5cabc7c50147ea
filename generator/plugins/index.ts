import type { Plugin } from '../plugin.js';
import { cataloguePlugin } from './catalogue/emit.js';
import { creditPacksPlugin } from './credit-packs/emit.js';
import { consoleTypesPlugin } from './console-types/emit.js';
import { docsPlugin } from './docs/emit.js';
import { errorsPlugin } from './errors/emit.js';
import { markersPlugin } from './markers/emit.js';
import { openapiPlugin } from './openapi/emit.js';
import { pythonClientPlugin } from './python-client/emit.js';
import { pricesPlugin } from './prices/emit.js';
import { priceBooksPlugin } from './price-books/emit.js';
import { requestsPlugin } from './requests/emit.js';
import { providerMappingsPlugin } from './provider-mappings/emit.js';
import { providerProfilesPlugin } from './provider-profiles/emit.js';
import { routesPlugin } from './routes/emit.js';
import { sdkTypesPlugin } from './sdk-types/emit.js';
import { statesPlugin } from './states/emit.js';
import { storagePlansPlugin } from './storage-plans/emit.js';
import { supportPlugin } from './support/emit.js';
import { uiTextPlugin } from './ui-text/emit.js';
import { validatorsPlugin } from './validators/emit.js';
import { vectorsPlugin } from './vectors/emit.js';

/** Every output kind, each in its own folder; the order here does not matter (dependsOn does). */
export const plugins: Plugin[] = [
  supportPlugin,
  validatorsPlugin,
  pricesPlugin,
  markersPlugin,
  cataloguePlugin,
  errorsPlugin,
  openapiPlugin,
  sdkTypesPlugin,
  consoleTypesPlugin,
  routesPlugin,
  requestsPlugin,
  docsPlugin,
  vectorsPlugin,
  storagePlansPlugin,
  creditPacksPlugin,
  priceBooksPlugin,
  uiTextPlugin,
  statesPlugin,
  providerMappingsPlugin,
  providerProfilesPlugin,
  pythonClientPlugin,
];
