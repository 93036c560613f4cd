// Responses of the alert and webhook routes that are not records of their own (alerts/ keeps the
// rule, incident, endpoint and delivery schemas).
import { z } from 'zod';

export const AcceptedDeliverySchema = z
  .object({ deliveryId: z.string(), eventId: z.string().describe('the webhook-id of every attempt') })
  .meta({ id: 'AcceptedDelivery' });
