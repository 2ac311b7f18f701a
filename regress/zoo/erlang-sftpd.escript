#!/usr/bin/env escript
%%
%% erlang-sftpd.escript: Erlang/OTP's ssh daemon with its ssh_sftpd
%% subsystem on 127.0.0.1:PORT, for regress/t-zoo.sh.  Public keys only
%% (USERDIR/authorized_keys), host key in SYSDIR; paths are served from
%% "/".  Prints "ready" once it listens; runs until killed.
%%
%% usage: erlang-sftpd.escript PORT SYSDIR USERDIR
main([Port, SysDir, UserDir]) ->
    ok = ssh:start(),
    {ok, _} = ssh:daemon({127,0,0,1}, list_to_integer(Port),
        [{system_dir, SysDir}, {user_dir, UserDir},
         {auth_methods, "publickey"},
         {subsystems, [ssh_sftpd:subsystem_spec([{cwd, "/"}])]}]),
    io:format("ready~n"),
    receive stop -> ok end;
main(_) ->
    io:format(standard_error, "usage: erlang-sftpd.escript PORT SYSDIR USERDIR~n", []),
    halt(2).
