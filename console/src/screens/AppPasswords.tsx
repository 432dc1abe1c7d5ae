import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { type Answer, api, ok } from '../api';
import { when } from '../format';
import type { AppPassword } from '../resources';
import { useConfirm } from '../ui/confirm';
import { ErrorNote, Loading, Notice, Page } from '../ui/feedback';
import { TextField } from '../ui/form';
import { columnsFor, DataTable } from '../ui/table';

type Created = Answer<'/v1/users/me/application-passwords', 'post'>;

/** Application passwords of the signed-in administrator, for scripts and CI (Basic auth). */
export function AppPasswords() {
  const client = useQueryClient();
  const confirm = useConfirm();
  const [created, setCreated] = useState<Created | null>(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const list = useQuery({
    queryKey: ['app-passwords'],
    queryFn: () => ok(api.GET('/v1/users/me/application-passwords')),
  });
  const {
    register,
    handleSubmit,
    reset,
    formState: { errors, isSubmitting },
  } = useForm<{ name: string }>({ defaultValues: { name: '' } });

  const onSubmit = async (f: { name: string }) => {
    setError(null);
    setNotice('');
    try {
      setCreated(await ok(api.POST('/v1/users/me/application-passwords', { body: { name: f.name.trim() } })));
      reset();
      await client.invalidateQueries({ queryKey: ['app-passwords'] });
    } catch (e) {
      setError(e);
    }
  };
  const revoke = (p: AppPassword) =>
    confirm.ask({
      title: `Revoke “${p.name}”?`,
      body: <p>Scripts using it are refused from now on. This cannot be undone.</p>,
      confirmLabel: 'Revoke password',
      danger: true,
      action: async () => {
        await ok(
          api.DELETE('/v1/users/me/application-passwords/{uuid}', { params: { path: { uuid: p.uuid } } }),
        );
        if (created?.uuid === p.uuid) setCreated(null);
        setNotice(`“${p.name}” is revoked.`);
        await client.invalidateQueries({ queryKey: ['app-passwords'] });
      },
    });

  const col = columnsFor<AppPassword>();
  const columns = [
    col.accessor('name', { header: 'Name' }),
    col.accessor('created_at', { header: 'Created', cell: (c) => when(c.getValue()), sortFn: 'text' }),
    col.accessor('last_used_at', {
      header: 'Last used',
      cell: (c) => when(c.getValue(), 'never'),
      sortFn: 'text',
    }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) => (
        <button type="button" className="small danger" onClick={() => revoke(c.row.original)}>
          Revoke<span className="sr-only"> {c.row.original.name}</span>
        </button>
      ),
    }),
  ];

  return (
    <Page title="Application passwords">
      <p className="lead">
        For scripts and CI: <code>Authorization: Basic base64(email:password)</code> over HTTPS. Your own
        password never works there.
      </p>
      <form onSubmit={handleSubmit(onSubmit)} noValidate className="card form inline-form">
        <TextField
          label="Name of the new password"
          hint="Where it is used, e.g. “deploy”."
          error={errors.name}
          autoComplete="off"
          {...register('name', { required: 'Name it.' })}
        />
        <button type="submit" className="primary" disabled={isSubmitting}>
          Create
        </button>
      </form>
      <ErrorNote error={error} />
      {created ? (
        <div className="note ok" role="status">
          <p>
            The password of “{created.name}”, shown this once:{' '}
            <code className="secret">{created.password}</code>
          </p>
          <p>Copy it now; the server keeps only its hash.</p>
        </div>
      ) : null}
      <Notice>{notice}</Notice>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading what="application passwords" />
      ) : list.data ? (
        <DataTable
          caption="Application passwords"
          columns={columns}
          data={list.data}
          rowKey={(p) => p.uuid}
          sortable
          empty="No application passwords."
        />
      ) : null}
      {confirm.dialog}
    </Page>
  );
}
