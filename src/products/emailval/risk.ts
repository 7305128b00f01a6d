/**
 * SPEC's risk rules, exactly: high when the domain is disposable and/or has no MX; medium when
 * the local part is role-like; low otherwise. An address that fails the format checks is high
 * ("an elevated risk object"): nothing about it could be checked.
 */
import type { EmailFormatReason, EmailMxReason, EmailRisk, EmailRiskReason } from './types.js';

export interface RiskFindings {
  disposable: boolean;
  /** Why there is no MX; null when MX records were found. */
  mxReason: EmailMxReason | null;
  roleAccount: boolean;
}

export function assessRisk({ disposable, mxReason, roleAccount }: RiskFindings): EmailRisk {
  const reasons: EmailRiskReason[] = [];
  if (disposable) reasons.push('disposable_domain');
  if (mxReason) reasons.push(mxReason);
  if (roleAccount) reasons.push('role_account');
  const level = disposable || mxReason ? 'high' : roleAccount ? 'medium' : 'low';
  return { level, reasons };
}

export function invalidFormatRisk(reason: EmailFormatReason): EmailRisk {
  return { level: 'high', reasons: ['invalid_format', reason] };
}
