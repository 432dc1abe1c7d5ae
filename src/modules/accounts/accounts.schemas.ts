import { Type } from 'typebox';
import { Email, PlainText } from '../../http/schemas.js';

export const User = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  role: Type.Union([Type.Literal('administrator'), Type.Literal('customer')]),
  first_name: Type.String(),
  last_name: Type.String(),
});

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const SessionResponse = Type.Object({ user: User, nonce: Type.String() });

export const CreateUserBody = Type.Object(
  {
    email: Email,
    password: Type.String({ minLength: 8, maxLength: 1024 }),
    role: Type.Optional(Type.Union([Type.Literal('administrator'), Type.Literal('customer')])),
    first_name: Type.Optional(PlainText({ maxLength: 100 })),
    last_name: Type.Optional(PlainText({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const AppPasswordBody = Type.Object(
  { name: PlainText({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const AppPasswordCreated = Type.Object({
  uuid: Type.String(),
  name: Type.String(),
  password: Type.String(),
});

export const AppPasswordList = Type.Array(
  Type.Object({
    uuid: Type.String(),
    name: Type.String(),
    created_at: Type.String(),
    last_used_at: Type.Union([Type.String(), Type.Null()]),
  }),
);

export const USER_SORTS = ['id', 'email', 'name'] as const;

export const UserListQuery = Type.Object(
  {
    role: Type.Optional(Type.Enum(['administrator', 'customer'])),
    search: Type.Optional(
      PlainText({
        minLength: 1,
        maxLength: 200,
        description: 'In the email and the full name, ignoring case',
      }),
    ),
    sort: Type.Optional(
      Type.Enum(USER_SORTS, {
        description: 'Default id; name is the last name, then the first name; ties are broken by id',
      }),
    ),
    order: Type.Optional(Type.Enum(['asc', 'desc'], { description: 'Default desc for id, asc otherwise' })),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
);

/** Asks for a link by email: a password reset or a sign-in link. */
export const EmailLinkBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254 }) },
  { additionalProperties: false },
);

export const SignInLinkClaimBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The token of the emailed sign-in link',
    }),
  },
  { additionalProperties: false },
);

export const SetPasswordBody = Type.Object(
  {
    password: Type.String({ minLength: 8, maxLength: 1024 }),
    current_password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'Required when the account has a password; an account made at checkout has none',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ResetPasswordBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the emailed link' }),
    password: Type.String({ minLength: 8, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
