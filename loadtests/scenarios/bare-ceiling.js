// vus-1000's shape and journey against bare endpoints that answer fixed data of the same shape and size
// (CONCERTS_PATH, default /api/ceiling/concerts; the API's `ceiling` profile): no cache, no database. k6 sends
// the same requests and does the same work per response as in vus-1000, so on a machine k6 shares with the
// API the two runs differ only in what the API does. Its requests per second are the ceiling the cached
// endpoints are compared with (loadtests/run.sh --scenario vus-1000 --ceiling). setup() fails with the status
// and the URL when the API runs without the ceiling profile.
import { useConcertsPath } from '../lib/journey.js';
import { summaryFor } from '../lib/summary.js';

export { options, setup, default } from './vus-1000.js';

useConcertsPath('/api/ceiling/concerts');

export const handleSummary = summaryFor('bare-ceiling');
