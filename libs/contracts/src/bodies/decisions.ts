import { z } from 'zod';

// Bodies of the application's decision routes that are checked before the decision is looked up.

/** PUT /app/v1/workspaces/{ws}/decisions/{id}/endpoint: switches the decision's run endpoint on or off. */
export const ENDPOINT_BODY = z.object({ enabled: z.boolean({ error: 'must be a boolean' }) });
